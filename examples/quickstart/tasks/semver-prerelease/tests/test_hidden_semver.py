"""Hidden tests for compare: SemVer 2.0.0 precedence including pre-releases."""

import itertools
import unittest

from versions import compare

# The precedence example of semver.org section 11, lowest first.
ORDERED = [
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0",
    "1.0.1-0",
    "1.0.1",
]


class HiddenCompareTest(unittest.TestCase):
    def test_prerelease_ranks_below_release(self):
        self.assertEqual(compare("2.0.0-rc.1", "2.0.0"), -1)
        self.assertEqual(compare("2.0.0", "2.0.0-rc.1"), 1)

    def test_specification_order(self):
        for (i, a), (j, b) in itertools.product(enumerate(ORDERED), repeat=2):
            expected = (i > j) - (i < j)
            with self.subTest(a=a, b=b):
                self.assertEqual(compare(a, b), expected)

    def test_numeric_identifiers_compare_numerically(self):
        self.assertEqual(compare("1.0.0-alpha.10", "1.0.0-alpha.9"), 1)
        self.assertEqual(compare("1.0.0-2", "1.0.0-10"), -1)

    def test_numeric_identifiers_rank_below_alphanumeric(self):
        self.assertEqual(compare("1.0.0-999", "1.0.0-a"), -1)
        self.assertEqual(compare("1.0.0-alpha.1", "1.0.0-alpha.a"), -1)

    def test_build_metadata_is_ignored(self):
        self.assertEqual(compare("1.0.0+build.1", "1.0.0+build.2"), 0)
        self.assertEqual(compare("1.0.0-rc.1+x", "1.0.0-rc.1"), 0)

    def test_invalid_versions_raise(self):
        for bad in ("1.0", "1.0.0-", "01.0.0", "1.0.0-alpha..1"):
            with self.subTest(bad=bad), self.assertRaises(ValueError):
                compare(bad, "1.0.0")


if __name__ == "__main__":
    unittest.main()
