package security

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// authority is a test certificate authority (ECDSA P-256).
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

// newCert returns a new key and the template of a certificate for name,
// valid from an hour ago for a day.
func newCert(t *testing.T, name string) (*ecdsa.PrivateKey, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	return key, &x509.Certificate{
		SerialNumber: serial(t),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
	}
}

func newAuthority(t *testing.T, name string) *authority {
	t.Helper()
	key, tmpl := newCert(t, name)
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	return &authority{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// pool is a cert pool that trusts only this authority.
func (a *authority) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(a.cert)
	return p
}

// issue returns a certificate for usage signed by the authority, as PEM
// (certificate, key). A server certificate is for 127.0.0.1 (an IP SAN).
func (a *authority) issue(t *testing.T, name string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	key, tmpl := newCert(t, name)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{usage}
	if usage == x509.ExtKeyUsageServerAuth {
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// clientCert returns a client certificate signed by the authority.
func (a *authority) clientCert(t *testing.T) tls.Certificate {
	t.Helper()
	c, k := a.issue(t, "redlease client", x509.ExtKeyUsageClientAuth)
	cert, err := tls.X509KeyPair(c, k)
	require.NoError(t, err)
	return cert
}

// serverFiles writes the authority's certificate and a server certificate
// and key to dir, and returns the redis.conf lines that use them.
func (a *authority) serverFiles(t *testing.T, dir string) []string {
	t.Helper()
	c, k := a.issue(t, "redis-server", x509.ExtKeyUsageServerAuth)
	files := map[string][]byte{"ca.crt": a.pem, "server.crt": c, "server.key": k}
	for name, b := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
	}
	return []string{
		"tls-cert-file " + strconv.Quote(filepath.Join(dir, "server.crt")),
		"tls-key-file " + strconv.Quote(filepath.Join(dir, "server.key")),
		"tls-ca-cert-file " + strconv.Quote(filepath.Join(dir, "ca.crt")),
		"tls-auth-clients yes",
	}
}

func serial(t *testing.T) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 64))
	require.NoError(t, err)
	return n
}
