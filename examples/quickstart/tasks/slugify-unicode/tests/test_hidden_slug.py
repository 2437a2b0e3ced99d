"""Hidden tests for slugify: transliteration and clean separators."""

import re
import unittest

from textkit import slugify


class HiddenSlugifyTest(unittest.TestCase):
    def test_accents_are_transliterated(self):
        self.assertEqual(slugify("Crème brûlée for beginners"), "creme-brulee-for-beginners")
        self.assertEqual(slugify("Ünïcödé café"), "unicode-cafe")
        self.assertEqual(slugify("naïve façade"), "naive-facade")

    def test_separators_collapse(self):
        self.assertEqual(slugify("Pros - Cons"), "pros-cons")
        self.assertEqual(slugify("a -- b"), "a-b")
        self.assertEqual(slugify("  spaced   out  "), "spaced-out")

    def test_no_leading_or_trailing_hyphen(self):
        self.assertEqual(slugify("--draft--"), "draft")
        self.assertEqual(slugify("- hello -"), "hello")
        self.assertEqual(slugify("!!!"), "")

    def test_existing_behaviour_is_kept(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")
        self.assertEqual(slugify("Top 10 Tips"), "top-10-tips")

    def test_output_alphabet(self):
        for title in ["Ça va? Très bien!", "x -y- z", "Déjà vu -- again", "Ω and ñ"]:
            slug = slugify(title)
            with self.subTest(title=title):
                self.assertRegex(slug, r"^([a-z0-9]+(-[a-z0-9]+)*)?$")
                self.assertIsNone(re.search(r"--", slug))


if __name__ == "__main__":
    unittest.main()
