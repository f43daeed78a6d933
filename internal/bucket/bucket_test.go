package bucket

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"

	smithyhttp "github.com/aws/smithy-go/transport/http"
)

func TestIsURL(t *testing.T) {
	t.Parallel()
	for dest, want := range map[string]bool{
		"s3://b/p": true, "gs://b": true, "S3+x.y-z://b": true, "out": false, "./out": false, "/tmp/out": false,
		`C:\out`: false, "://b": false, "a b://c": false, "dir/with://colon": false,
	} {
		if got := IsURL(dest); got != want {
			t.Errorf("IsURL(%q) = %v, want %v", dest, got, want)
		}
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		raw, bucket, prefix, err string
	}{
		{raw: "s3://b", bucket: "b"},
		{raw: "s3://b/", bucket: "b"},
		{raw: "s3://b/a/b/?region=eu-west-1&endpoint=http://127.0.0.1:9000&use_path_style=true", bucket: "b", prefix: "a/b"},
		{raw: "gs://b/p", err: `unknown scheme "gs"`},
		{raw: "s3:///p", err: "names no bucket"},
		{raw: "s3://b:99/p", err: "names no bucket"},
		{raw: "s3://b/a//c", err: "empty"},
		{raw: "s3://b/a/../c", err: `".."`},
		{raw: "s3://b/p#x", err: "fragment"},
		{raw: "s3://b/p?regoin=x", err: `unknown query parameter "regoin"`},
		{raw: "s3://b/p?use_path_style=yes", err: "not true or false"},
		{raw: "s3://b/p?fips=maybe", err: "not a true or false"},
		{raw: "s3://b/p?region=a&region=b", err: "given 2 times"},
		{raw: "s3://b\x7f/p", err: "is not a URL"},
		{raw: "s3://b/p?endpoint=https://s3.example.com&disable_https=true", bucket: "b", prefix: "p"},
		{raw: "s3://b/p?endpoint=127.0.0.1:9000", err: `endpoint="127.0.0.1:9000" is not an http:// or https:// URL`},
		{raw: "s3://b/p?endpoint=ftp://h", err: `endpoint="ftp://h" is not an http:// or https:// URL`},
	} {
		loc, err := Parse(tc.raw)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q) = %v, want an error with %q", tc.raw, err, tc.err)
			}
			continue
		}
		if err != nil || loc.Bucket != tc.bucket || loc.Prefix != tc.prefix {
			t.Errorf("Parse(%q) = %+v, %v; want bucket %q prefix %q", tc.raw, loc, err, tc.bucket, tc.prefix)
		}
	}
}

func TestLocationKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ raw, key string }{
		{"s3://b", "row/out.png"},
		{"s3://b/p/q", "p/q/row/out.png"},
	} {
		loc, err := Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := loc.Key("row", "out.png"); got != tc.key {
			t.Errorf("%s: Key = %q, want %q", tc.raw, got, tc.key)
		}
	}
}

func TestCredentialSource(t *testing.T) {
	t.Parallel()
	const profile = `profile "ci", from profile= in the URL`
	for source, want := range map[string]string{
		"EnvConfigCredentials":                      "environment variables AWS_ACCESS_KEY_ID",
		"SharedConfigCredentials: /home/u/.aws/cfg": `shared profile (profile "ci", from profile= in the URL, in /home/u/.aws/cfg)`,
		"EC2RoleProvider":                           "instance's role",
		"WebIdentityCredentials":                    "assumed role",
		"CredentialsEndpointProvider":               "pod's role",
	} {
		if got := credentialSource(source, profile); !strings.Contains(got, want) {
			t.Errorf("credentialSource(%q) = %q, want it to say %q", source, got, want)
		}
	}
}

// The profile named in the URL wins over AWS_PROFILE, which wins over "default", as in the
// AWS SDK.
func TestLocationProfile(t *testing.T) {
	for _, tc := range []struct{ raw, env, want string }{
		{"s3://b?profile=ci", "other", `profile "ci", from profile= in the URL`},
		{"s3://b", "other", `profile "other", from AWS_PROFILE`},
		{"s3://b", "", `profile "default"`},
	} {
		t.Setenv("AWS_PROFILE", tc.env)
		loc, err := Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := loc.profile(); got != tc.want {
			t.Errorf("%s with AWS_PROFILE=%q: profile() = %q, want %q", tc.raw, tc.env, got, tc.want)
		}
	}
}

// An access key is named by its last four characters only; a short one not at all.
func TestAccessKeyHint(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]string{
		"AKIAIOSFODNN7EXAMPLE": `access key ID ending in "MPLE"`,
		"short":                "access key ID *****",
	} {
		if got := accessKeyHint(id); got != want {
			t.Errorf("accessKeyHint(%q) = %q, want %q", id, got, want)
		}
	}
}

func TestRefusalReason(t *testing.T) {
	t.Parallel()
	const key = `access key ID ending in "MPLE"`
	for _, tc := range []struct{ code, hint, want string }{
		{"InvalidAccessKeyId", key, `the server does not know the access key ID ending in "MPLE"`},
		{"XAdminUserNotFound", key, `the server does not know the access key ID ending in "MPLE"`},
		{"SignatureDoesNotMatch", key, `the secret key is not the one of the access key ID ending in "MPLE"`},
		{"AccessDenied", key, `the access key ID ending in "MPLE" may not use this bucket`},
		{"AccessDenied", "", "the credentials may not use this bucket"},
		{"ExpiredToken", key, "session token (AWS_SESSION_TOKEN or the role's) has expired"},
		{"AuthorizationHeaderMalformed", key, "set region= in the URL"},
		{"Forbidden", key, `the bucket refused the access key ID ending in "MPLE"`},
	} {
		if got := refusalReason(tc.code, tc.hint); !strings.Contains(got, tc.want) {
			t.Errorf("refusalReason(%q) = %q, want it to say %q", tc.code, got, tc.want)
		}
	}
}

// Without a region from the URL, the environment or a profile, a bucket behind endpoint= is
// signed for us-east-1, and one on AWS is refused before any request. Not parallel: it sets the
// environment the AWS SDK reads.
func TestOpenRegion(t *testing.T) {
	for k, v := range map[string]string{
		"AWS_REGION": "", "AWS_DEFAULT_REGION": "", "AWS_PROFILE": "", "AWS_CONFIG_FILE": os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE": os.DevNull, "AWS_EC2_METADATA_DISABLED": "true",
	} {
		t.Setenv(k, v)
	}
	for _, tc := range []struct{ raw, region, err string }{
		{raw: "s3://b/p?endpoint=http://127.0.0.1:9000", region: EndpointRegion},
		{raw: "s3://b/p?endpoint=http://127.0.0.1:9000&region=eu-west-3", region: "eu-west-3"},
		{raw: "s3://b/p?region=eu-west-3", region: "eu-west-3"},
		{raw: "s3://b/p", err: "no region for s3://b/p: set region= in the URL, or AWS_REGION"},
	} {
		loc, err := Parse(tc.raw)
		if err != nil {
			t.Fatal(err)
		}
		s, err := Open(context.Background(), loc)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Open(%s) = %v, want an error with %q", tc.raw, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("Open(%s): %v", tc.raw, err)
		} else if got := s.client.Options().Region; got != tc.region {
			t.Errorf("Open(%s): region %q, want %q", tc.raw, got, tc.region)
		}
	}
}

// A request the bucket refused says which credentials it refused; any other failure does not.
func TestRefusedWith(t *testing.T) {
	t.Parallel()
	s := &Store{creds: "credentials from the environment variables AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"}
	answer := func(code int) error {
		return &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}}, Err: errors.New("refused")}
	}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{answer(403), " (with credentials from the environment variables AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"},
		{answer(401), " (with credentials from the environment variables AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"},
		{answer(500), ""},
		{errors.New("connection refused"), ""},
	} {
		if got := s.refusedWith(tc.err); got != tc.want {
			t.Errorf("refusedWith(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
