//go:build benchecho

// Command bench-echo-plugin is the provider with every call about svc_job_batch answered by
// handing back what Terraform sent, at the MessagePack level (no decoding of the rows): a floor
// for what Terraform itself costs in a plan and an apply of the batch. Not a provider: it sends
// nothing, its validation accepts anything, and its apply fills in made-up results. For
// measurements only (BENCHMARKS.md), built with
//
//	go build -tags benchecho -o <dir>/terraform-provider-svc ./cmd/bench-echo-plugin
//
// and compared with this build by SVC_BENCH_BATCH_ADDED_BASELINE=<dir> (TestBenchJobBatch).
package main

import (
	"bytes"
	"context"
	"fmt"
	"log"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/svc-org/terraform-provider-svc/internal/provider"
)

const batch = "svc_job_batch"

var unknown = []byte{0xd4, 0, 0} // a value not known yet, as Terraform encodes it

type echo struct{ tfprotov6.ProviderServer }

func (e echo) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	if req.TypeName == batch {
		return &tfprotov6.ValidateResourceConfigResponse{}, nil
	}
	return e.ProviderServer.ValidateResourceConfig(ctx, req)
}

func (e echo) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	if req.TypeName == batch && req.RawState != nil && len(req.RawState.JSON) > 0 {
		return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: &tfprotov6.DynamicValue{JSON: req.RawState.JSON}}, nil
	}
	return e.ProviderServer.UpgradeResourceState(ctx, req)
}

func (e echo) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	if req.TypeName == batch {
		return &tfprotov6.ReadResourceResponse{NewState: req.CurrentState, Private: req.Private}, nil
	}
	return e.ProviderServer.ReadResource(ctx, req)
}

// PlanResourceChange plans the proposed new state with each configured row that results lacks
// planned unknown, and the counts unknown when any is.
func (e echo) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	if req.TypeName != batch || req.PriorState == nil || isNull(req.PriorState.MsgPack) {
		return e.ProviderServer.PlanResourceChange(ctx, req)
	}
	if isNull(req.ProposedNewState.MsgPack) {
		return &tfprotov6.PlanResourceChangeResponse{PlannedState: req.ProposedNewState, PlannedPrivate: req.PriorPrivate}, nil
	}
	config := fields(req.Config.MsgPack)
	keys := rowKeys(config["rows"])
	proposed := fields(req.ProposedNewState.MsgPack)
	proposed["rows"] = fields(req.PriorState.MsgPack)["rows"] // write-only: null, as state holds it
	added := 0
	proposed["results"] = editMap(proposed["results"], func(entries map[string][]byte) {
		for _, k := range keys {
			if _, ok := entries[k]; !ok {
				entries[k] = unknown
				added++
			}
		}
	})
	if added > 0 {
		proposed["succeeded"], proposed["failed"] = unknown, unknown
	}
	return &tfprotov6.PlanResourceChangeResponse{PlannedState: &tfprotov6.DynamicValue{MsgPack: encodeObject(proposed)}, PlannedPrivate: req.PriorPrivate}, nil
}

// ApplyResourceChange is the planned state with each unknown result a succeeded job and the
// counts filled in.
func (e echo) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	if req.TypeName != batch || req.PriorState == nil || isNull(req.PriorState.MsgPack) {
		return e.ProviderServer.ApplyResourceChange(ctx, req)
	}
	if isNull(req.PlannedState.MsgPack) {
		return &tfprotov6.ApplyResourceChangeResponse{NewState: req.PlannedState}, nil
	}
	planned := fields(req.PlannedState.MsgPack)
	n := 0
	planned["results"] = editMap(planned["results"], func(entries map[string][]byte) {
		n = len(entries)
		for k, v := range entries {
			if bytes.Equal(v, unknown) {
				entries[k] = succeededRow(k)
			}
		}
	})
	if bytes.Equal(planned["succeeded"], unknown) {
		planned["succeeded"], planned["failed"] = encode(n), encode(0)
	}
	return &tfprotov6.ApplyResourceChangeResponse{NewState: &tfprotov6.DynamicValue{MsgPack: encodeObject(planned)}, Private: req.PlannedPrivate}, nil
}

func isNull(raw []byte) bool { return len(raw) == 0 || (len(raw) == 1 && raw[0] == 0xc0) }

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// fields is an object's attributes, each as its encoding.
func fields(raw []byte) map[string][]byte {
	dec := msgpack.NewDecoder(bytes.NewReader(raw))
	n, err := dec.DecodeMapLen()
	must(err)
	out := make(map[string][]byte, n)
	for range n {
		k, err := dec.DecodeString()
		must(err)
		v, err := dec.DecodeRaw()
		must(err)
		out[k] = v
	}
	return out
}

// editMap is the map encoded in raw with edit applied to its entries.
func editMap(raw []byte, edit func(map[string][]byte)) []byte {
	entries := fields(raw)
	edit(entries)
	return encodeObject(entries)
}

// encodeObject encodes a map of encodings (attribute or key order does not matter to Terraform).
func encodeObject(entries map[string][]byte) []byte {
	var b bytes.Buffer
	enc := msgpack.NewEncoder(&b)
	must(enc.EncodeMapLen(len(entries)))
	for k, v := range entries {
		must(enc.EncodeString(k))
		must(enc.Encode(msgpack.RawMessage(v)))
	}
	return b.Bytes()
}

func encode(v any) []byte {
	b, err := msgpack.Marshal(v)
	must(err)
	return b
}

// rowKeys is the keys of the configured rows (a dynamic value: its type as JSON, then the value).
func rowKeys(raw []byte) []string {
	dec := msgpack.NewDecoder(bytes.NewReader(raw))
	_, err := dec.DecodeArrayLen()
	must(err)
	_, err = dec.DecodeBytes()
	must(err)
	n, err := dec.DecodeMapLen()
	must(err)
	keys := make([]string, 0, n)
	for range n {
		k, err := dec.DecodeString()
		must(err)
		must(dec.Skip())
		keys = append(keys, k)
	}
	return keys
}

// succeededRow is a made-up result of a row whose job succeeded.
func succeededRow(key string) []byte {
	var b bytes.Buffer
	enc := msgpack.NewEncoder(&b)
	must(enc.EncodeMapLen(4))
	must(enc.EncodeString("error"))
	must(enc.EncodeNil())
	must(enc.EncodeString("id"))
	must(enc.EncodeString(fmt.Sprintf("00000000-0000-4000-8000-%012x", len(key)*7919)))
	must(enc.EncodeString("outputs"))
	must(enc.EncodeMapLen(1))
	must(enc.EncodeString("3"))
	must(enc.EncodeArrayLen(1))
	must(enc.EncodeString("asset-" + key))
	must(enc.EncodeString("status"))
	must(enc.EncodeString("succeeded"))
	return b.Bytes()
}

func main() {
	inner := provider.NewProtocol6Server("echo")
	err := tf6server.Serve("registry.terraform.io/svc-org/svc", func() tfprotov6.ProviderServer { return echo{inner()} })
	if err != nil {
		log.Fatal(err)
	}
}
