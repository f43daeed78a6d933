package provider

import (
	"context"
	"sync"

	"github.com/svc-org/terraform-provider-svc/internal/client"
	"github.com/svc-org/terraform-provider-svc/internal/workflow"
)

// objectInfoCache keeps the service's object_info for one configured provider (one Terraform
// run): a plan that checks many workflows or converts many editor exports reads it once. Only a
// successful read is kept; after a failure the next caller asks the service again, so a passing
// outage or a canceled read never sticks for the rest of the run.
type objectInfoCache struct {
	mu   sync.Mutex
	info *client.ObjectInfo
	defs workflow.ClassDefs
}

// fetchObjectInfo reads object_info from the service.
type fetchObjectInfo func(ctx context.Context) (*client.ObjectInfo, error)

// get returns the cached document, reading it with fetch when none is cached. Callers wait for a
// read already under way rather than starting their own.
func (c *objectInfoCache) get(ctx context.Context, fetch fetchObjectInfo) (*client.ObjectInfo, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.info != nil {
		return c.info, nil
	}
	info, err := fetch(ctx)
	if err != nil {
		return nil, err
	}
	c.info = info
	return info, nil
}

// classDefs returns the cached document's class definitions in the editor's input order, read
// from the document once.
func (c *objectInfoCache) classDefs(ctx context.Context, fetch fetchObjectInfo) (workflow.ClassDefs, error) {
	info, err := c.get(ctx, fetch)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.defs == nil {
		defs, err := workflow.ParseClassDefs(info.Raw)
		if err != nil {
			return nil, err
		}
		c.defs = defs
	}
	return c.defs, nil
}

// objectInfo returns the service's object_info, cached for the provider's configuration
// (Configure always makes the cache).
func (d *providerData) objectInfo(ctx context.Context) (*client.ObjectInfo, error) {
	return d.objectInfoCache.get(ctx, d.client.GetObjectInfo)
}

// classDefs returns the service's node classes as the workflow converter reads them, cached for
// the provider's configuration.
func (d *providerData) classDefs(ctx context.Context) (workflow.ClassDefs, error) {
	return d.objectInfoCache.classDefs(ctx, d.client.GetObjectInfo)
}
