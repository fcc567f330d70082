import repetend


def test_all_is_sorted_and_exported():
    assert repetend.__all__ == sorted(repetend.__all__)
    for name in repetend.__all__:
        assert hasattr(repetend, name), name
