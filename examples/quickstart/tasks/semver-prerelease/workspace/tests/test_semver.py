import unittest

from versions import compare, parse


class ParseTest(unittest.TestCase):
    def test_full_version(self):
        self.assertEqual(parse("1.4.2-beta.3+build.7"), (1, 4, 2, "beta.3", "build.7"))

    def test_invalid(self):
        with self.assertRaises(ValueError):
            parse("1.2")


class CompareTest(unittest.TestCase):
    def test_numeric_parts(self):
        self.assertEqual(compare("1.2.3", "1.10.0"), -1)
        self.assertEqual(compare("2.0.0", "1.9.9"), 1)
        self.assertEqual(compare("1.2.3", "1.2.3"), 0)


if __name__ == "__main__":
    unittest.main()
