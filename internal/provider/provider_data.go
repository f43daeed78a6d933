package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// What every resource's call to the service starts from: the provider's data (its client, its
// secrets, the credentials a submission carries).

// configuredData is the data Configure gave resources; nil before Configure succeeded.
func (p *svcProvider) configuredData() *providerData { return p.configured.Load() }

// configureData extracts the provider's data in a resource's or data source's Configure. It is
// nil before the provider is configured (early validation), which callers tolerate.
func configureData(v any, diags *diag.Diagnostics) *providerData {
	if v == nil {
		return nil
	}
	d, ok := v.(*providerData)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("Expected *providerData, got %T. This is a bug in the provider.", v))
		return nil
	}
	return d
}

// logContext carries the provider's secrets in the returned context, for the log helpers (log.go)
// to mask in every line written with it.
func (d *providerData) logContext(ctx context.Context) context.Context {
	return withLogSecrets(ctx, d.secrets)
}

// redact masks the provider's secrets in text; a provider not configured has none (the destroy
// of a batch with nothing to cancel runs without one).
func (d *providerData) redact(text string) string {
	if d == nil {
		return text
	}
	return redact(text, d.secrets)
}

// withSecrets returns the provider's data with more secrets to mask: the write-only values of
// one apply (a partner key, a repository token), so that a service echoing one back cannot put
// it in a log line or a diagnostic.
func (d *providerData) withSecrets(values ...types.String) *providerData {
	c := *d
	c.secrets = append([]string(nil), d.secrets...)
	for _, v := range values {
		if s := v.ValueString(); s != "" {
			c.secrets = append(c.secrets, s)
		}
	}
	return &c
}

// partnerExtraData is the extra_data credential for partner nodes: the resource's write-only
// token or key, else the provider's partner_api_key. Only one is ever sent: the service does not
// support a request that carries both.
func (d *providerData) partnerExtraData(apiKeyWO, authTokenWO types.String) map[string]string {
	switch {
	case authTokenWO.ValueString() != "":
		return map[string]string{"auth_token_svc_org": authTokenWO.ValueString()}
	case apiKeyWO.ValueString() != "":
		return map[string]string{"api_key_svc_org": apiKeyWO.ValueString()}
	case d.partnerAPIKey != "":
		return map[string]string{"api_key_svc_org": d.partnerAPIKey}
	}
	return nil
}

// promptExtraData is the extra_data credential of a v1 prompt: as partnerExtraData (the
// resource's write-only key, else partner_api_key), else the provider's api_key. The v1 interface
// uses one key for cloud authentication and partner nodes, and this key already goes
// to the same service in X-API-Key, so sending it again exposes nothing new; without it, partner
// nodes of a prompt would run without a key. v2 jobs (partnerExtraData) do not fall back.
func (d *providerData) promptExtraData(apiKeyWO types.String) map[string]string {
	if extra := d.partnerExtraData(apiKeyWO, types.StringNull()); extra != nil {
		return extra
	}
	if d.apiKey != "" {
		return map[string]string{"api_key_svc_org": d.apiKey}
	}
	return nil
}

// readyToRead reports whether a data source can be read now. While the provider's settings
// are unknown (an endpoint or key from a resource not yet applied), a read would go to the
// wrong service; Terraform reads data sources during plan all the same, so this says what to do.
func (d *providerData) readyToRead(dataSource string, diags *diag.Diagnostics) bool {
	if d == nil || !d.configUnknown {
		return true
	}
	diags.AddError("Provider settings not known yet",
		fmt.Sprintf("%s cannot be read during this plan: some svc provider settings come from resources that are not "+
			"applied yet. Add depends_on = [<that resource>] to the data source, so Terraform reads it during apply, "+
			"or apply that resource first.", dataSource))
	return false
}
