// Package calc is a tiny package for coverage fixtures.
package calc

// Add adds.
func Add(a, b int) int {
	return a + b
}
