// Package shop keeps stock levels (PluginBench's whole-evaluation quality fixture).
package shop

// InStock says whether item has a positive level.
func InStock(levels map[string]int, item string) bool {
	return levels[item] > 0
}
