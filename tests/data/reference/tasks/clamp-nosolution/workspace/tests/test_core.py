from calc.core import add, sign


def test_add():
    assert add(1, 2) == 3


def test_sign():
    assert sign(-4) == -1
