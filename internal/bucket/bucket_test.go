package bucket

import (
	"strings"
	"testing"
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
	for source, want := range map[string]string{
		"EnvConfigCredentials":                      "environment variables AWS_ACCESS_KEY_ID",
		"SharedConfigCredentials: /home/u/.aws/cfg": "shared profile (/home/u/.aws/cfg)",
		"EC2RoleProvider":                           "instance's role",
		"WebIdentityCredentials":                    "assumed role",
		"CredentialsEndpointProvider":               "pod's role",
	} {
		if got := credentialSource(source); !strings.Contains(got, want) {
			t.Errorf("credentialSource(%q) = %q, want it to say %q", source, got, want)
		}
	}
}
