import unittest

from csvlite import format_row


class FormatRowTest(unittest.TestCase):
    def test_plain_values(self):
        self.assertEqual(format_row(["Ada", "Lovelace", 36]), "Ada,Lovelace,36")

    def test_comma_is_quoted(self):
        self.assertEqual(format_row(["London, UK", "x"]), '"London, UK",x')

    def test_none_is_empty(self):
        self.assertEqual(format_row(["a", None, "c"]), "a,,c")


if __name__ == "__main__":
    unittest.main()
