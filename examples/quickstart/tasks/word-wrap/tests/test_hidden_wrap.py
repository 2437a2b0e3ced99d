"""Hidden tests for wrap: the width is a hard limit, long words are split."""

import random
import unittest

from layout import wrap


class HiddenWrapTest(unittest.TestCase):
    def test_lines_never_exceed_width(self):
        self.assertEqual(wrap("aaa bbb ccc", 6), ["aaa", "bbb", "ccc"])
        self.assertEqual(wrap("aaa bbb ccc", 7), ["aaa bbb", "ccc"])
        self.assertEqual(wrap("the quick brown fox", 10), ["the quick", "brown fox"])

    def test_long_words_are_split(self):
        self.assertEqual(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"])
        self.assertEqual(wrap("go https://example.org/x now", 8), ["go", "https://", "example.", "org/x", "now"])
        self.assertEqual(wrap("abcdefgh", 4), ["abcd", "efgh"])

    def test_width_one(self):
        self.assertEqual(wrap("ab c", 1), ["a", "b", "c"])

    def test_invalid_width(self):
        for width in (0, -3):
            with self.subTest(width=width), self.assertRaises(ValueError):
                wrap("text", width)

    def test_whitespace_and_empty_input(self):
        self.assertEqual(wrap("  one\ttwo\nthree  ", 9), ["one two", "three"])
        self.assertEqual(wrap("   ", 5), [])

    def test_random_texts_keep_words_in_order(self):
        rng = random.Random(99)
        for _ in range(200):
            words = ["x" * rng.randint(1, 12) for _ in range(rng.randint(0, 15))]
            width = rng.randint(1, 10)
            lines = wrap(" ".join(words), width)
            with self.subTest(words=words, width=width):
                self.assertTrue(all(0 < len(line) <= width for line in lines))
                self.assertTrue(all(line == line.strip() for line in lines))
                self.assertEqual("".join("".join(lines).split()), "".join(words))


if __name__ == "__main__":
    unittest.main()
