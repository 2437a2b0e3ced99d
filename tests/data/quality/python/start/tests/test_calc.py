from pkg.calc import add, sign


def test_add():
    assert add(1, 2) == 3


def test_sign():
    assert sign(5) == 1
    assert sign(-5) == -1
    assert sign(0) == 0
