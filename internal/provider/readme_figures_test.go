package provider

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// README.md quotes no measured figure that BENCHMARKS.md (written by `make bench`) does not hold:
// a latency, a size or a ratio typed by hand drifts from the latest run.
func TestReadmeFiguresComeFromBenchmarks(t *testing.T) {
	t.Parallel()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	readme, bench := read("README.md"), read("BENCHMARKS.md")
	figure := regexp.MustCompile(`(\d+(?:\.\d+)?)\s?(ms|MiB|×)`)
	for _, m := range figure.FindAllStringSubmatch(readme, -1) {
		number, unit := m[1], m[2]
		if unit == "×" {
			unit = "" // BENCHMARKS.md writes ratios as plain numbers
		}
		held := regexp.MustCompile(`(^|[^\d.])` + regexp.QuoteMeta(number) + `(\s?` + regexp.QuoteMeta(unit) + `|\s\|)`)
		if !held.MatchString(bench) {
			t.Errorf("README.md quotes %q, which BENCHMARKS.md does not hold: refer to BENCHMARKS.md instead", m[0])
		}
	}
}
