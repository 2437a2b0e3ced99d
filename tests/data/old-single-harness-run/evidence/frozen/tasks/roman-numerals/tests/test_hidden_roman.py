"""Hidden tests for from_roman: canonical numerals parse, everything else is refused."""

import unittest

from numerals import from_roman, to_roman


class HiddenFromRomanTest(unittest.TestCase):
    def test_round_trip_every_value(self):
        for number in range(1, 4000):
            self.assertEqual(from_roman(to_roman(number)), number)

    def test_rejects_malformed_numerals(self):
        for bad in ["IIII", "VV", "IC", "IIV", "XM", "VX", "LL", "DD", "CCCC", "MMMM", "IXIX", "XCX"]:
            with self.subTest(numeral=bad), self.assertRaises(ValueError):
                from_roman(bad)

    def test_rejects_empty_and_foreign_characters(self):
        for bad in ["", "XIZ", "xiv", " XIV", "XIV ", "1", "IV-"]:
            with self.subTest(numeral=bad), self.assertRaises(ValueError):
                from_roman(bad)


if __name__ == "__main__":
    unittest.main()
