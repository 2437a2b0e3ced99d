import unittest

from numerals import from_roman, to_roman


class ToRomanTest(unittest.TestCase):
    def test_known_values(self):
        self.assertEqual(to_roman(1994), "MCMXCIV")
        self.assertEqual(to_roman(4), "IV")
        self.assertEqual(to_roman(3999), "MMMCMXCIX")

    def test_out_of_range(self):
        with self.assertRaises(ValueError):
            to_roman(0)


class FromRomanTest(unittest.TestCase):
    def test_known_values(self):
        self.assertEqual(from_roman("XIV"), 14)
        self.assertEqual(from_roman("MCMXCIV"), 1994)


if __name__ == "__main__":
    unittest.main()
