package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/svc-org/terraform-provider-svc/internal/emulator"
)

// seedFileHelp ends the usage text: the -seed file format and an example.
const seedFileHelp = `
Seed file (-seed): the node registry's content, as JSON; every field is optional and the
registry flags above add to it:

  {
    "registry_tokens": {"dev-registry-token": "alice"},   bearer token -> user
    "publishers":      {"acme": ["alice"]},               publisher -> members
    "repo_tokens":     {"dev-repo-token": "alice"},       code-hosting token -> repository owner
    "nodes":           {"acme-upscaler": "alice"}         node (unclaimed) -> repository owner
  }

A user may claim a node for a publisher when their registry token is known, they are one of
the publisher's members, and the repo token they send belongs to the node's repository owner.
examples/registry/emulator-seed.json is the seed examples/registry applies against:

  svc-emulator -seed examples/registry/emulator-seed.json
  # the same with flags:
  svc-emulator -registry-token dev-registry-token=alice -publisher acme=alice \
    -repo-token dev-repo-token=alice -node acme-upscaler=alice -node acme-denoiser=alice
`

// seed is the node registry's starting content: what -seed files and the registry flags say.
type seed struct {
	RegistryTokens map[string]string   `json:"registry_tokens"`
	Publishers     map[string][]string `json:"publishers"`
	RepoTokens     map[string]string   `json:"repo_tokens"`
	Nodes          map[string]string   `json:"nodes"`

	files stringsFlag // -seed paths, read after the flags
}

func (s *seed) addRegistryToken(token, user string) {
	s.RegistryTokens = put(s.RegistryTokens, token, user)
}
func (s *seed) addRepoToken(token, owner string) { s.RepoTokens = put(s.RepoTokens, token, owner) }
func (s *seed) addNode(node, owner string)       { s.Nodes = put(s.Nodes, node, owner) }

func (s *seed) addPublisher(publisher, member string) {
	if s.Publishers == nil {
		s.Publishers = map[string][]string{}
	}
	if !slices.Contains(s.Publishers[publisher], member) {
		s.Publishers[publisher] = append(s.Publishers[publisher], member)
	}
}

func put(m map[string]string, k, v string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[k] = v
	return m
}

// loadFiles merges every -seed file into s. Unknown fields are refused, so that a misspelt
// key is not silently ignored.
func (s *seed) loadFiles() error {
	for _, path := range s.files {
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("seed file: %w", err)
		}
		var f seed
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return fmt.Errorf("seed file %s: %w", path, err)
		}
		s.merge(f)
	}
	return nil
}

func (s *seed) merge(f seed) {
	f.each(s.addRegistryToken, s.addPublisher, s.addRepoToken, s.addNode)
}

// apply gives the server the seed's registry content.
func (s *seed) apply(srv *emulator.Server) {
	s.each(srv.AddRegistryToken, srv.AddPublisher, srv.SetRepoOwner, srv.AddNode)
}

// each hands every entry of the seed to the function for its kind: registry token and user,
// publisher and member, repo token and owner, node and repository owner.
func (s *seed) each(registryToken, publisher, repoToken, node func(key, value string)) {
	for token, user := range s.RegistryTokens {
		registryToken(token, user)
	}
	for p, members := range s.Publishers {
		for _, m := range members {
			publisher(p, m)
		}
	}
	for token, owner := range s.RepoTokens {
		repoToken(token, owner)
	}
	for n, owner := range s.Nodes {
		node(n, owner)
	}
}

// pairFlag is a repeatable KEY=VALUE flag handing each pair to add.
type pairFlag func(key, value string)

func (f pairFlag) String() string { return "" }

func (f pairFlag) Set(v string) error {
	key, value, ok := strings.Cut(v, "=")
	if !ok || key == "" || value == "" {
		return fmt.Errorf("%q is not KEY=VALUE", v)
	}
	f(key, value)
	return nil
}

// stringsFlag is a repeatable flag collecting its values.
type stringsFlag []string

func (f *stringsFlag) String() string { return strings.Join(*f, ",") }

func (f *stringsFlag) Set(v string) error {
	*f = append(*f, v)
	return nil
}
