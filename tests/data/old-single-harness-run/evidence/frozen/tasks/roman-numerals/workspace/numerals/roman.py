"""Convert between integers and Roman numerals."""

_VALUES = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}

_PAIRS = [
    (1000, "M"),
    (900, "CM"),
    (500, "D"),
    (400, "CD"),
    (100, "C"),
    (90, "XC"),
    (50, "L"),
    (40, "XL"),
    (10, "X"),
    (9, "IX"),
    (5, "V"),
    (4, "IV"),
    (1, "I"),
]


def to_roman(number):
    """Return the canonical Roman numeral for an integer from 1 to 3999."""
    if isinstance(number, bool) or not isinstance(number, int) or not 1 <= number <= 3999:
        raise ValueError(f"cannot write {number!r} as a Roman numeral")
    out = []
    for value, symbol in _PAIRS:
        count, number = divmod(number, value)
        out.append(symbol * count)
    return "".join(out)


def from_roman(numeral):
    """Parse a Roman numeral such as "MCMXCIV" and return its value."""
    total = 0
    for i, symbol in enumerate(numeral):
        value = _VALUES[symbol]
        if i + 1 < len(numeral) and _VALUES[numeral[i + 1]] > value:
            total -= value
        else:
            total += value
    return total
