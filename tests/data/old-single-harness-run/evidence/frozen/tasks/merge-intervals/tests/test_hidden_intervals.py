"""Hidden tests for merge: touching, nested, unsorted and untouched inputs."""

import random
import unittest

from spans import merge


def covered(intervals):
    return {x for start, end in intervals for x in range(start, end + 1)}


class HiddenMergeTest(unittest.TestCase):
    def test_touching_intervals_merge(self):
        self.assertEqual(merge([(9, 10), (10, 11)]), [(9, 11)])
        self.assertEqual(merge([(1, 2), (2, 3), (3, 4)]), [(1, 4)])

    def test_nested_interval_does_not_shrink_the_outer_one(self):
        self.assertEqual(merge([(1, 10), (2, 3)]), [(1, 10)])
        self.assertEqual(merge([(1, 10), (2, 3), (4, 12)]), [(1, 12)])

    def test_unsorted_input(self):
        self.assertEqual(merge([(8, 9), (1, 3), (2, 5)]), [(1, 5), (8, 9)])

    def test_disjoint_and_single_points(self):
        self.assertEqual(merge([(1, 2), (4, 5)]), [(1, 2), (4, 5)])
        self.assertEqual(merge([(3, 3), (3, 3)]), [(3, 3)])
        self.assertEqual(merge([(-5, -1), (-1, 0)]), [(-5, 0)])

    def test_input_is_not_modified(self):
        data = [(5, 6), (1, 2)]
        merge(data)
        self.assertEqual(data, [(5, 6), (1, 2)])

    def test_random_inputs_cover_the_same_points_disjointly(self):
        rng = random.Random(1234)
        for _ in range(300):
            data = []
            for _ in range(rng.randint(0, 8)):
                start = rng.randint(0, 30)
                data.append((start, start + rng.randint(0, 6)))
            result = merge(data)
            with self.subTest(data=data):
                self.assertEqual(covered(result), covered(data))
                self.assertEqual(result, sorted(result))
                for (_, end), (start, _) in zip(result, result[1:]):
                    self.assertLess(end, start)


if __name__ == "__main__":
    unittest.main()
