package provider

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// watchPeakRSSOf samples the peak resident set (VmHWM) of every process running the executable
// bin until the returned function is called, and returns the highest value seen (bytes). Unlike
// a match on the process name, it ignores other builds of the provider running on the machine.
func watchPeakRSSOf(bin string) func() uint64 {
	stop := make(chan struct{})
	done := make(chan uint64)
	go func() {
		var peak uint64
		for {
			peak = max(peak, peakRSSOf(bin))
			select {
			case <-stop:
				done <- peak
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	return func() uint64 { close(stop); return <-done }
}

func peakRSSOf(bin string) uint64 {
	entries, _ := os.ReadDir("/proc")
	var peak uint64
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err != nil || exe != bin {
			continue
		}
		if status, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status")); err == nil {
			peak = max(peak, vmHWM(status))
		}
	}
	return peak
}

// vmHWM is the peak resident set (VmHWM) in bytes that a /proc/<pid>/status file reports, or 0.
func vmHWM(status []byte) uint64 {
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
