import unittest

from layout import wrap


class WrapTest(unittest.TestCase):
    def test_short_text_fits_on_one_line(self):
        self.assertEqual(wrap("hello world", 20), ["hello world"])

    def test_empty_text(self):
        self.assertEqual(wrap("", 10), [])


if __name__ == "__main__":
    unittest.main()
