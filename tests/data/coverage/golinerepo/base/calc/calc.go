package calc

// Double returns twice n.
func Double(n int) int {
	return 2 * n
}
