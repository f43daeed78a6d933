package emulator

import (
	"sync/atomic"
	"time"
)

// testClock is the wall clock moved forward by Advance: given as Options.Now, it takes the
// server past an expiry without sleeping.
type testClock struct{ ahead atomic.Int64 }

func (c *testClock) Now() time.Time { return time.Now().Add(time.Duration(c.ahead.Load())) }

func (c *testClock) Advance(d time.Duration) { c.ahead.Add(int64(d)) }
