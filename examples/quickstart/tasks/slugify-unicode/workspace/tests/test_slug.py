import unittest

from textkit import slugify


class SlugifyTest(unittest.TestCase):
    def test_plain_title(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")

    def test_digits_are_kept(self):
        self.assertEqual(slugify("Top 10 Tips"), "top-10-tips")


if __name__ == "__main__":
    unittest.main()
