package provider

import (
	"sync/atomic"
	"time"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// testClock is the wall clock moved forward by Advance. A test gives the same clock to the
// reference server (emulator.Options.Now) and to the provider (factories), so both see an
// expiry pass at once, without sleeping.
type testClock struct{ ahead atomic.Int64 }

func (c *testClock) Now() time.Time { return time.Now().Add(time.Duration(c.ahead.Load())) }

// Advance moves the clock forward by d.
func (c *testClock) Advance(d time.Duration) { c.ahead.Add(int64(d)) }

// AdvancePast moves the clock just past t.
func (c *testClock) AdvancePast(t time.Time) {
	if d := t.Sub(c.Now()); d > 0 {
		c.Advance(d)
	}
	c.Advance(time.Second) // past whole-second expiries (signed URLs) too
}

// factories runs the provider in-process with this clock.
func (c *testClock) factories() map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		"svc": func() (tfprotov6.ProviderServer, error) { return protocol6Server("test", c.Now)(), nil },
	}
}
