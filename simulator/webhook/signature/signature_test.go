package signature_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/partnersim/partnersim/simulator/webhook/signature"
)

// reference computes the digest the way the spec words it, independently of the package.
func reference(t int64, body []byte, secret string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strconv.FormatInt(t, 10) + "." + string(body)))
	return hex.EncodeToString(mac.Sum(nil))
}

const (
	secretA = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	secretB = "whsec_2b7nQvZyOa5cXkqR1s9lHh0pFzUuWtE3"
)

var (
	goldenT    = time.Unix(1700000000, 0)
	goldenBody = []byte(`{"event_id":"evt_1","event_type":"kyc"}`)
)

func TestSignGolden(t *testing.T) {
	// The hex literals were computed outside Go (Python's hmac); reference() recomputes them.
	cases := []struct {
		t      int64
		body   string
		secret string
		hex    string
	}{
		{1700000000, `{"event_id":"evt_1","event_type":"kyc"}`, secretA, "3d96b7adc5e80759ce20a77bc9d953110efcb05259358cffd92a91a27a97a7f2"},
		{1495999758, ``, "whsec_test", "e242dd0ea366942f496f63a36efd2c3f74ad24d8b51112335c156b4d6c80059a"},
		{1, `hello world`, "k", "d04f3c4a09d7f6545ae4a0e0db6afb706a2b62b359cdf4f04eefe80bf09ece83"},
	}
	for _, c := range cases {
		require.Equal(t, c.hex, reference(c.t, []byte(c.body), c.secret), "reference digest")
		got := signature.Sign(time.Unix(c.t, 0), []byte(c.body), c.secret)
		assert.Equal(t, "t="+strconv.FormatInt(c.t, 10)+",v1="+c.hex, got)
	}
}

func TestSignTwoSecretsNewestFirstSubSecondTruncated(t *testing.T) {
	at := goldenT.Add(999 * time.Millisecond)
	got := signature.Sign(at, goldenBody, secretB, secretA)
	want := "t=1700000000,v1=" + reference(1700000000, goldenBody, secretB) + ",v1=" + reference(1700000000, goldenBody, secretA)
	assert.Equal(t, want, got)
	assert.NotContains(t, got, " ")
	assert.Equal(t, strings.ToLower(got), got, "hex must be lower-case")
}

func TestVerifyAccepts(t *testing.T) {
	sigA := reference(goldenT.Unix(), goldenBody, secretA)
	sigB := reference(goldenT.Unix(), goldenBody, secretB)
	ts := "t=" + strconv.FormatInt(goldenT.Unix(), 10)
	cases := map[string]struct {
		header  string
		secrets []string
	}{
		"signed by Sign":                    {signature.Sign(goldenT, goldenBody, secretA), []string{secretA}},
		"two v1, only the second valid":     {ts + ",v1=" + reference(goldenT.Unix(), goldenBody, "whsec_other") + ",v1=" + sigA, []string{secretA}},
		"two v1, only the first valid":      {ts + ",v1=" + sigA + ",v1=" + strings.Repeat("0", 64), []string{secretA}},
		"one v1, second secret of two":      {ts + ",v1=" + sigB, []string{secretA, secretB}},
		"unknown tag beside a valid v1":     {ts + ",v0=deadbeef,v2=abc,v1=" + sigA + ",x=", []string{secretA}},
		"t after v1":                        {"v1=" + sigA + "," + ts, []string{secretA}},
		"non-hex v1 beside a valid one":     {ts + ",v1=zz,v1=" + sigA, []string{secretA}},
		"upper-case hex":                    {ts + ",v1=" + strings.ToUpper(sigA), []string{secretA}},
		"whitespace around entries":         {" " + ts + ", v1=" + sigA + " ", []string{secretA}},
		"empty secret skipped, real one ok": {ts + ",v1=" + sigA, []string{"", secretA}},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			assert.NoError(t, signature.Verify(c.header, goldenBody, c.secrets, 5*time.Minute, goldenT))
		})
	}
}

func TestVerifyRefuses(t *testing.T) {
	tol := 5 * time.Minute
	signAt := func(at time.Time) string { return signature.Sign(at, goldenBody, secretA) }
	sigA := reference(goldenT.Unix(), goldenBody, secretA)
	ts := "t=" + strconv.FormatInt(goldenT.Unix(), 10)
	emptyKeySig := reference(goldenT.Unix(), goldenBody, "")
	cases := map[string]struct {
		header  string
		body    []byte
		secrets []string
		want    error
	}{
		"no header":              {"", goldenBody, []string{secretA}, signature.ErrNoHeader},
		"blank header":           {"   ", goldenBody, []string{secretA}, signature.ErrNoHeader},
		"entry without =":        {ts + ",v1", goldenBody, []string{secretA}, signature.ErrMalformedHeader},
		"empty entry":            {ts + ",,v1=" + sigA, goldenBody, []string{secretA}, signature.ErrMalformedHeader},
		"empty tag":              {ts + ",=x,v1=" + sigA, goldenBody, []string{secretA}, signature.ErrMalformedHeader},
		"t not a number":         {"t=yesterday,v1=" + sigA, goldenBody, []string{secretA}, signature.ErrMalformedHeader},
		"t signed":               {"t=+1700000000,v1=" + sigA, goldenBody, []string{secretA}, signature.ErrMalformedHeader},
		"t bare minus":           {"t=-,v1=" + sigA, goldenBody, []string{secretA}, signature.ErrMalformedHeader},
		"t overflows":            {"t=99999999999999999999,v1=" + sigA, goldenBody, []string{secretA}, signature.ErrMalformedHeader},
		"t twice":                {ts + "," + ts + ",v1=" + sigA, goldenBody, []string{secretA}, signature.ErrMalformedHeader},
		"no t":                   {"v1=" + sigA, goldenBody, []string{secretA}, signature.ErrNoTimestamp},
		"no v1":                  {ts, goldenBody, []string{secretA}, signature.ErrNoSignature},
		"only other schemes":     {ts + ",v0=" + sigA, goldenBody, []string{secretA}, signature.ErrNoSignature},
		"tampered body":          {signAt(goldenT), []byte(`{"event_id":"evt_2","event_type":"kyc"}`), []string{secretA}, signature.ErrSignatureMismatch},
		"wrong secret":           {signAt(goldenT), goldenBody, []string{secretB}, signature.ErrSignatureMismatch},
		"t altered":              {"t=1700000001,v1=" + sigA, goldenBody, []string{secretA}, signature.ErrSignatureMismatch},
		"non-hex v1 only":        {ts + ",v1=not-hex", goldenBody, []string{secretA}, signature.ErrSignatureMismatch},
		"truncated v1":           {ts + ",v1=" + sigA[:62], goldenBody, []string{secretA}, signature.ErrSignatureMismatch},
		"no secrets":             {signAt(goldenT), goldenBody, nil, signature.ErrNoSecret},
		"empty secret only":      {ts + ",v1=" + emptyKeySig, goldenBody, []string{""}, signature.ErrNoSecret},
		"too old":                {signAt(goldenT.Add(-tol - time.Second)), goldenBody, []string{secretA}, signature.ErrTimestampTooOld},
		"in the future":          {signAt(goldenT.Add(tol + time.Second)), goldenBody, []string{secretA}, signature.ErrTimestampInFuture},
		"far future, saturating": {"t=9000000000000000000,v1=" + reference(9000000000000000000, goldenBody, secretA), goldenBody, []string{secretA}, signature.ErrTimestampInFuture},
		"far past":               {"t=0,v1=" + reference(0, goldenBody, secretA), goldenBody, []string{secretA}, signature.ErrTimestampTooOld},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			err := signature.Verify(c.header, c.body, c.secrets, tol, goldenT)
			require.Error(t, err)
			assert.ErrorIs(t, err, c.want, "got %v", err)
			for _, other := range []error{signature.ErrNoHeader, signature.ErrMalformedHeader, signature.ErrNoTimestamp,
				signature.ErrNoSignature, signature.ErrNoSecret, signature.ErrTimestampTooOld,
				signature.ErrTimestampInFuture, signature.ErrSignatureMismatch} {
				if other != c.want {
					assert.NotErrorIs(t, err, other)
				}
			}
		})
	}
}

func TestVerifyToleranceEdges(t *testing.T) {
	tol := 5 * time.Minute
	header := signature.Sign(goldenT, goldenBody, secretA)
	for _, now := range []time.Time{goldenT, goldenT.Add(tol), goldenT.Add(-tol)} {
		assert.NoError(t, signature.Verify(header, goldenBody, []string{secretA}, tol, now), "now=t%+v", now.Sub(goldenT))
	}
	assert.ErrorIs(t, signature.Verify(header, goldenBody, []string{secretA}, tol, goldenT.Add(tol+time.Nanosecond)), signature.ErrTimestampTooOld)
	assert.ErrorIs(t, signature.Verify(header, goldenBody, []string{secretA}, tol, goldenT.Add(-tol-time.Nanosecond)), signature.ErrTimestampInFuture)
	// Zero tolerance means the default, never "no check".
	assert.NoError(t, signature.Verify(header, goldenBody, []string{secretA}, 0, goldenT.Add(signature.DefaultTolerance)))
	assert.ErrorIs(t, signature.Verify(header, goldenBody, []string{secretA}, 0, goldenT.Add(signature.DefaultTolerance+time.Second)), signature.ErrTimestampTooOld)
}

func TestSignatureCheckedBeforeTime(t *testing.T) {
	// A stale header with a wrong signature is reported as a mismatch: time errors speak only
	// about authentic headers.
	header := signature.Sign(goldenT.Add(-time.Hour), goldenBody, secretB)
	assert.ErrorIs(t, signature.Verify(header, goldenBody, []string{secretA}, time.Minute, goldenT), signature.ErrSignatureMismatch)
}

func TestErrorMessagesAreClear(t *testing.T) {
	err := signature.Verify(signature.Sign(goldenT.Add(-10*time.Minute), goldenBody, secretA), goldenBody, []string{secretA}, 5*time.Minute, goldenT)
	assert.EqualError(t, err, "signature timestamp is too old: t is 10m0s old, tolerance 5m0s")
	err = signature.Verify("t=1700000000,v1=00,v1=11", goldenBody, []string{secretA, secretB}, 0, goldenT)
	assert.EqualError(t, err, "no v1 signature matches the body: 2 v1 entries checked against 2 secrets")
	_, err = signature.Parse("t=1,v1")
	assert.EqualError(t, err, `malformed signature header: entry "v1" is not tag=value`)
}

func TestParseRoundTrip(t *testing.T) {
	header := signature.Sign(goldenT, goldenBody, secretB, secretA)
	h, err := signature.Parse(header + ",v9=ignored")
	require.NoError(t, err)
	assert.True(t, h.Timestamp.Equal(goldenT), "timestamp: got %v want %v", h.Timestamp, goldenT)
	assert.Equal(t, []string{reference(goldenT.Unix(), goldenBody, secretB), reference(goldenT.Unix(), goldenBody, secretA)}, h.Signatures)
	assert.Equal(t, header, h.String())
	assert.NoError(t, h.Verify(goldenBody, []string{secretA}, time.Minute, goldenT))
}

func TestNewSecret(t *testing.T) {
	seed := bytes.Repeat([]byte{0xfb}, 32)
	s, err := signature.NewSecret(bytes.NewReader(seed))
	require.NoError(t, err)
	assert.Equal(t, "whsec_"+base64.RawURLEncoding.EncodeToString(seed), s)
	assert.Equal(t, "whsec_-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_v7-_s", s, "base64url alphabet, no padding")

	r1, err := signature.NewSecret(nil)
	require.NoError(t, err)
	r2, err := signature.NewSecret(nil)
	require.NoError(t, err)
	assert.NotEqual(t, r1, r2)
	assert.Len(t, r1, len("whsec_")+43)

	_, err = signature.NewSecret(bytes.NewReader(seed[:31]))
	assert.Error(t, err, "a short read is an error")
	_, err = signature.NewSecret(iotest.ErrReader(errors.New("boom")))
	assert.ErrorContains(t, err, "boom")
}

func BenchmarkSign(b *testing.B) {
	body := bytes.Repeat([]byte("x"), 1024)
	now := time.Unix(1700000000, 0)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		_ = signature.Sign(now, body, secretA)
	}
}

func BenchmarkVerify(b *testing.B) {
	body := bytes.Repeat([]byte("x"), 1024)
	now := time.Unix(1700000000, 0)
	header := signature.Sign(now, body, secretB, secretA)
	secrets := []string{secretA}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := signature.Verify(header, body, secrets, time.Minute, now); err != nil {
			b.Fatal(err)
		}
	}
}
