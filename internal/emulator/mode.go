package emulator

import (
	"time"
)

// Mode names a preset of Options. The zero value is ModeGenerous.
type Mode string

const (
	// ModeGenerous is the reference server as it always was: hashes at once, signed URLs valid
	// for an hour, an event stream, progress that moves, no Retry-After on reads.
	ModeGenerous Mode = "generous"
	// ModeStrict is a server as little generous as the contract allows, so that nothing a client
	// does depends on generosity. It sets, unless the Options set them already:
	//
	//	LazyHashes      outputs[].hash (and the asset record's hash of a job output) stays null
	//	                until ComputeHashes, or HashDelay after the job ended when HashDelay is set
	//	URLTTL          3 s: signed URLs expire seconds after they are signed (on the server's clock)
	//	ResignOnRead    every read signs new URLs, as presigned storage does
	//	EventsDisabled  the event stream answers 501
	//	FlatProgress    progress stays at 0 until the job ends
	//	ReadRetryAfter  1: reads of an unfinished job answer with Retry-After: 1
	//	Router.RetryAfter 1: the model router's 202 answers carry Retry-After: 1
	//	IgnoreRange     an asset's content is served whole (200) to a range request
	//
	// The v1 prompt socket stays: the v1 interface reports a prompt's outputs only there.
	ModeStrict Mode = "strict"
)

// StrictURLTTL is the lifetime of signed URLs in ModeStrict.
const StrictURLTTL = 3 * time.Second

// withMode applies the preset o.Mode names to the knobs o leaves unset.
func (o Options) withMode() Options {
	if o.Mode != ModeStrict {
		return o
	}
	o.LazyHashes = true
	o.ResignOnRead = true
	o.EventsDisabled = true
	o.FlatProgress = true
	o.IgnoreRange = true
	if o.URLTTL <= 0 {
		o.URLTTL = StrictURLTTL
	}
	if o.ReadRetryAfter <= 0 {
		o.ReadRetryAfter = 1
	}
	if o.Router.RetryAfter <= 0 {
		o.Router.RetryAfter = 1
	}
	return o
}
