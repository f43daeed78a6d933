// Package bucket writes files into an S3-compatible bucket named by a URL, as gocloud.dev/blob
// spells it: s3://bucket/prefix?region=..&endpoint=..&use_path_style=true. One syntax covers AWS,
// Cloudflare R2, MinIO, Ceph and Google Cloud Storage's S3 interface. Credentials come from the
// AWS SDK's default chain (environment, shared profile, instance or pod role), never from the URL.
// It knows nothing of Terraform.
package bucket

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// Scheme is the only URL scheme a destination may have.
const Scheme = "s3"

// IsURL reports whether dest names a bucket rather than a local directory: it starts with a
// scheme and "://". A Windows path (C:\x) or a relative one never does.
func IsURL(dest string) bool {
	i := strings.Index(dest, "://")
	if i <= 0 {
		return false
	}
	return strings.IndexFunc(dest[:i], func(r rune) bool { return !schemeRune(r) }) < 0
}

// schemeRune reports whether r may be part of a URL scheme.
func schemeRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.'
}

// Location is a parsed bucket URL: the bucket, the key prefix under which objects go, and the
// query the AWS configuration is read from.
type Location struct {
	Bucket string
	Prefix string // without a leading or trailing slash; "" for the bucket's root
	query  url.Values
}

// clientParams are the query parameters the S3 client reads itself; every other one goes to
// the AWS configuration (gocloud.dev/aws), which refuses a parameter it does not know.
var clientParams = map[string]bool{"use_path_style": true, "s3ForcePathStyle": true, "disable_https": true}

// Parse reads a bucket URL. It refuses a scheme other than s3, a URL without a bucket, a prefix
// with an empty, "." or ".." segment, and a query parameter that is misspelled or has a value
// of the wrong kind; every error names the URL.
func Parse(raw string) (Location, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Location{}, fmt.Errorf("%q is not a URL: %w", raw, errors.Unwrap(err))
	}
	if u.Scheme != Scheme {
		return Location{}, fmt.Errorf("%q: unknown scheme %q; a bucket is named s3://bucket/prefix (any S3-compatible service, with endpoint=... for one that is not AWS)", raw, u.Scheme)
	}
	if u.Host == "" || u.User != nil || u.Port() != "" {
		return Location{}, fmt.Errorf("%q names no bucket: the bucket is the URL's host, as in s3://bucket/prefix", raw)
	}
	if u.Fragment != "" || u.Opaque != "" {
		return Location{}, fmt.Errorf("%q: a bucket URL has no fragment", raw)
	}
	prefix := strings.Trim(u.Path, "/")
	if prefix != "" {
		for _, seg := range strings.Split(prefix, "/") {
			if seg == "" || seg == "." || seg == ".." {
				return Location{}, fmt.Errorf("%q: the prefix %q has an empty, \".\" or \"..\" segment", raw, prefix)
			}
		}
	}
	q := u.Query()
	for name, values := range q {
		if len(values) != 1 {
			return Location{}, fmt.Errorf("%q: query parameter %q is given %d times", raw, name, len(values))
		}
		if clientParams[name] {
			if _, err := strconv.ParseBool(values[0]); err != nil {
				return Location{}, fmt.Errorf("%q: %s=%q is not true or false", raw, name, values[0])
			}
		}
	}
	if err := checkConfigParams(q); err != nil {
		return Location{}, fmt.Errorf("%q: %w", raw, err)
	}
	if err := checkEndpoint(q.Get("endpoint")); err != nil {
		return Location{}, fmt.Errorf("%q: %w", raw, err)
	}
	return Location{Bucket: u.Host, Prefix: prefix, query: q}, nil
}

// Key is the object key of the path elements under the location's prefix.
func (l Location) Key(elems ...string) string {
	return path.Join(append([]string{l.Prefix}, elems...)...)
}

// String is the location as s3://bucket/prefix, without its query.
func (l Location) String() string {
	if l.Prefix == "" {
		return Scheme + "://" + l.Bucket
	}
	return Scheme + "://" + l.Bucket + "/" + l.Prefix
}

// URL is the object's address as s3://bucket/key.
func (l Location) URL(key string) string { return Scheme + "://" + l.Bucket + "/" + key }

func (l Location) boolParam(names ...string) (value, set bool) {
	for _, n := range names {
		if v := l.query.Get(n); v != "" {
			b, _ := strconv.ParseBool(v) // checked by Parse
			return b, true
		}
	}
	return false, false
}

// configQuery is the query without the parameters the S3 client reads itself.
func (l Location) configQuery() url.Values {
	q := url.Values{}
	for k, v := range l.query {
		if !clientParams[k] {
			q[k] = v
		}
	}
	return q
}

// configParams are the query parameters gocloud.dev/aws reads into the AWS configuration, and
// of which kind a value must be.
var configParams = map[string]string{
	"region": "", "endpoint": "", "profile": "", "hostname_immutable": "bool", "dualstack": "bool", "fips": "bool",
	"rate_limiter_capacity": "int", "anonymous": "bool", "role": "", "role_session_name": "", "role_external_id": "",
	"role_duration": "", "web_identity_token_file": "", "request_checksum_calculation": "",
	"response_checksum_validation": "", "awssdk": "",
}

// checkConfigParams refuses a query parameter neither the S3 client nor the AWS configuration
// reads (a misspelling would otherwise be found only when the bucket is opened).
func checkConfigParams(q url.Values) error {
	for name, values := range q {
		if clientParams[name] {
			continue
		}
		kind, ok := configParams[name]
		if !ok {
			return fmt.Errorf("unknown query parameter %q (known: region, endpoint, profile, use_path_style, disable_https, ...)", name)
		}
		var err error
		switch kind {
		case "bool":
			_, err = strconv.ParseBool(values[0])
		case "int":
			_, err = strconv.Atoi(values[0])
		}
		if err != nil {
			return fmt.Errorf("%s=%q is not a %s", name, values[0], map[string]string{"bool": "true or false", "int": "whole number"}[kind])
		}
	}
	return nil
}

// checkEndpoint refuses an endpoint that is not an http:// or https:// URL with a host: the
// AWS SDK sends requests to it as written (disable_https=true makes an https:// one http://).
func checkEndpoint(endpoint string) error {
	if endpoint == "" {
		return nil
	}
	u, err := url.Parse(endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("endpoint=%q is not an http:// or https:// URL (a local server is endpoint=http://127.0.0.1:9000)", endpoint)
	}
	return nil
}
