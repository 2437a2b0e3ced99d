"""Hidden tests for format_row: RFC 4180 quoting that Python's csv module reads back."""

import csv
import io
import unittest

from csvlite import format_field, format_row


def read_back(line):
    return next(csv.reader(io.StringIO(line, newline="")))


class HiddenFormatRowTest(unittest.TestCase):
    def test_embedded_quotes_are_doubled(self):
        self.assertEqual(format_row(["Ada", 'says "hi", twice']), 'Ada,"says ""hi"", twice"')
        self.assertEqual(format_field('5" disk'), '"5"" disk"')
        self.assertEqual(format_field('"'), '""""')

    def test_line_breaks_are_quoted(self):
        self.assertEqual(format_field("line one\nline two"), '"line one\nline two"')
        self.assertEqual(format_field("a\r\nb"), '"a\r\nb"')
        self.assertEqual(format_field("cr\r"), '"cr\r"')

    def test_plain_fields_stay_bare(self):
        self.assertEqual(format_row(["Ada", "Lovelace", 36, None, ""]), "Ada,Lovelace,36,,")
        self.assertEqual(format_field(" padded "), " padded ")

    def test_round_trip_through_csv_module(self):
        rows = [
            ["plain", "with, comma", 'with "quotes"', "multi\nline", ""],
            ['"', ",", "\r\n", '""', "end"],
            ["trailing quote\"", "x,\"y\"\nz"],
        ]
        for row in rows:
            with self.subTest(row=row):
                self.assertEqual(read_back(format_row(row)), row)


if __name__ == "__main__":
    unittest.main()
