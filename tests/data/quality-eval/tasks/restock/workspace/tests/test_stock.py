from shop.stock import in_stock


def test_in_stock():
    assert in_stock({"a": 2}, "a")
    assert not in_stock({"a": 0}, "a")
