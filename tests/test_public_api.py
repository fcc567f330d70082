import repetend

PUBLIC = {
    "CleanConfig", "NearDupConfig", "NearDupIndex", "NearDupResult", "PhraseConfig", "PhraseResult",
    "Record", "ScanConfig", "ScanResult", "TemplateConfig", "TokenStore", "__version__",
    "build_store", "clean_corpus", "find_near_duplicates", "find_phrases", "open_store",
    "read_corpus", "scan", "tokenize",
}


def test_all_is_exactly_the_public_api_and_sorted():
    assert repetend.__all__ == sorted(PUBLIC)
    for name in repetend.__all__:
        assert hasattr(repetend, name), name


def test_readme_example_runs(tmp_path):
    import json

    pages = tmp_path / "pages.jsonl"
    footer = "Доставка бесплатно при заказе от 3000 рублей, подробности в разделе оплата."
    with pages.open("w", encoding="utf-8") as f:
        for i in range(30):
            f.write(json.dumps({"id": f"p{i}", "text": f"Page {i} body {i * 7} words. {footer}"})
                    + "\n")
    store = repetend.build_store(repetend.read_corpus([pages]), out=tmp_path / "store")
    phrases = repetend.find_phrases(store, repetend.PhraseConfig(min_docs=20, min_len=10))
    dups = repetend.find_near_duplicates(store, repetend.NearDupConfig(threshold=0.8))
    assert phrases.summary["phrases"] == 1
    assert phrases.summary["covered_share"] > 0.5
    assert len(dups.pairs) >= 0
