from repetend.cli import main

main()
