//go:build !race

package client

// raceDetector reports whether the tests run under the race detector, which slows the
// simulations of whole batches tenfold.
const raceDetector = false
