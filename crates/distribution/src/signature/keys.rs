//! The keys of keyed signatures, as cosign makes and reads them: a public key is a PEM
//! `PUBLIC KEY` (SubjectPublicKeyInfo) for ECDSA P-256 with SHA-256 (cosign's default) or Ed25519;
//! a signing key is a PEM `PRIVATE KEY` (PKCS#8, what `openssl genpkey` writes). Signatures are
//! ECDSA in ASN.1 DER, as cosign writes them. The cryptography is ring's; this file only reads
//! the two fixed key layouts and names a key by the sha256 of its SubjectPublicKeyInfo.

use ring::signature::{self, KeyPair as _};
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::{PrivatePkcs8KeyDer, SubjectPublicKeyInfoDer};

/// A key a signature can be checked with.
#[derive(Clone, PartialEq, Eq)]
pub struct PublicKey {
    algorithm: KeyAlgorithm,
    /// The key itself (an uncompressed P-256 point, or 32 Ed25519 bytes).
    key: Vec<u8>,
    /// `sha256:` and the hex sha256 of the SubjectPublicKeyInfo DER.
    fingerprint: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KeyAlgorithm {
    EcdsaP256,
    Ed25519,
}

/// Why a key could not be read.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error(
        "{what} is not a PEM public key (-----BEGIN PUBLIC KEY-----): {reason}; give the .pub file `cosign generate-key-pair` or `openssl pkey -pubout` writes"
    )]
    NotPublicKey { what: String, reason: String },
    #[error(
        "{what} is a public key of a kind cordon does not check ({found}); use ECDSA P-256 (cosign's default) or Ed25519"
    )]
    UnsupportedKey { what: String, found: String },
    #[error(
        "{what} is an encrypted cosign key, which cordon cannot read; sign with a PKCS#8 key (openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out KEY.pem) and give cosign the same key with `cosign import-key-pair --key KEY.pem`"
    )]
    EncryptedCosignKey { what: String },
    #[error(
        "{what} is not an unencrypted PKCS#8 ECDSA P-256 or Ed25519 private key (-----BEGIN PRIVATE KEY-----): {reason}"
    )]
    NotSigningKey { what: String, reason: String },
}

/// The most bytes of a key file (a PEM key is a few hundred).
const MAX_KEY_FILE_BYTES: u64 = 64 << 10;

/// A key file's bytes: a regular file of at most 64 KiB, opened without blocking (a FIFO or a
/// device named as a key neither hangs nor floods the host).
pub fn read_key_file(path: &std::path::Path) -> std::io::Result<Vec<u8>> {
    crate::read_bounded_file(path, MAX_KEY_FILE_BYTES)
}

/// The SubjectPublicKeyInfo DER of a P-256 key, up to the 65-byte point.
const P256_SPKI_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];
/// The SubjectPublicKeyInfo DER of an Ed25519 key, up to its 32 bytes.
const ED25519_SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

impl PublicKey {
    /// The key in `pem`, which holds it alone (`what` names where it came from, for errors).
    pub fn from_pem(pem: &[u8], what: &str) -> Result<Self, KeyError> {
        let text = String::from_utf8_lossy(pem);
        let not = |reason: &str| KeyError::NotPublicKey {
            what: what.to_string(),
            reason: reason.to_string(),
        };
        if text.contains("PRIVATE KEY-----") {
            return Err(not(
                "it holds a private key, which never belongs in a file of trusted keys (keep it apart and give only its .pub)",
            ));
        }
        if text.matches("-----BEGIN ").count() > 1 {
            return Err(not(
                "it holds more than one PEM block; give one key per file",
            ));
        }
        let der =
            SubjectPublicKeyInfoDer::from_pem_slice(pem).map_err(|err| KeyError::NotPublicKey {
                what: what.to_string(),
                reason: err.to_string(),
            })?;
        Self::from_spki_der(der.as_ref(), what)
    }

    /// The key in a SubjectPublicKeyInfo DER document.
    pub fn from_spki_der(der: &[u8], what: &str) -> Result<Self, KeyError> {
        let (algorithm, key) =
            if der.len() == P256_SPKI_PREFIX.len() + 65 && der.starts_with(&P256_SPKI_PREFIX) {
                (KeyAlgorithm::EcdsaP256, &der[P256_SPKI_PREFIX.len()..])
            } else if der.len() == ED25519_SPKI_PREFIX.len() + 32
                && der.starts_with(&ED25519_SPKI_PREFIX)
            {
                (KeyAlgorithm::Ed25519, &der[ED25519_SPKI_PREFIX.len()..])
            } else {
                return Err(KeyError::UnsupportedKey {
                    what: what.to_string(),
                    found: format!("a {}-byte SubjectPublicKeyInfo that is neither", der.len()),
                });
            };
        Ok(Self {
            algorithm,
            key: key.to_vec(),
            fingerprint: format!("sha256:{}", crate::sha256_hex(der)),
        })
    }

    /// `sha256:` and the hex sha256 of the key's SubjectPublicKeyInfo: how the lock names it.
    pub fn fingerprint(&self) -> &str {
        &self.fingerprint
    }

    /// Whether `signature` is this key's over `message`.
    pub fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        let algorithm: &dyn signature::VerificationAlgorithm = match self.algorithm {
            KeyAlgorithm::EcdsaP256 => &signature::ECDSA_P256_SHA256_ASN1,
            KeyAlgorithm::Ed25519 => &signature::ED25519,
        };
        signature::UnparsedPublicKey::new(algorithm, &self.key)
            .verify(message, signature)
            .is_ok()
    }
}

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PublicKey({:?}, {})", self.algorithm, self.fingerprint)
    }
}

/// A key to sign with.
pub struct SigningKey {
    pair: SigningPair,
    public: PublicKey,
}

enum SigningPair {
    EcdsaP256(signature::EcdsaKeyPair),
    Ed25519(signature::Ed25519KeyPair),
}

impl SigningKey {
    /// The key in `pem` (`what` names where it came from, for errors).
    pub fn from_pem(pem: &[u8], what: &str) -> Result<Self, KeyError> {
        if String::from_utf8_lossy(pem).contains("ENCRYPTED SIGSTORE PRIVATE KEY")
            || String::from_utf8_lossy(pem).contains("ENCRYPTED COSIGN PRIVATE KEY")
        {
            return Err(KeyError::EncryptedCosignKey {
                what: what.to_string(),
            });
        }
        let not = |reason: String| KeyError::NotSigningKey {
            what: what.to_string(),
            reason,
        };
        let der = PrivatePkcs8KeyDer::from_pem_slice(pem).map_err(|err| not(err.to_string()))?;
        let random = ring::rand::SystemRandom::new();
        let pair = match signature::EcdsaKeyPair::from_pkcs8(
            &signature::ECDSA_P256_SHA256_ASN1_SIGNING,
            der.secret_pkcs8_der(),
            &random,
        ) {
            Ok(pair) => SigningPair::EcdsaP256(pair),
            Err(ecdsa) => {
                match signature::Ed25519KeyPair::from_pkcs8_maybe_unchecked(der.secret_pkcs8_der())
                {
                    Ok(pair) => SigningPair::Ed25519(pair),
                    Err(_) => {
                        return Err(not(format!("not a P-256 key ({ecdsa}) nor an Ed25519 one")));
                    }
                }
            }
        };
        let spki = match &pair {
            SigningPair::EcdsaP256(pair) => {
                [&P256_SPKI_PREFIX[..], pair.public_key().as_ref()].concat()
            }
            SigningPair::Ed25519(pair) => {
                [&ED25519_SPKI_PREFIX[..], pair.public_key().as_ref()].concat()
            }
        };
        let public = PublicKey::from_spki_der(&spki, what)?;
        Ok(Self { pair, public })
    }

    pub fn public_key(&self) -> &PublicKey {
        &self.public
    }

    /// The signature over `message` (ECDSA in ASN.1 DER, or Ed25519's 64 bytes).
    pub fn sign(&self, message: &[u8]) -> Vec<u8> {
        match &self.pair {
            SigningPair::EcdsaP256(pair) => pair
                .sign(&ring::rand::SystemRandom::new(), message)
                .expect("ECDSA signing with the system's randomness")
                .as_ref()
                .to_vec(),
            SigningPair::Ed25519(pair) => pair.sign(message).as_ref().to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A P-256 key made by `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`.
    const OPENSSL_P256: &str = include_str!("test_keys/p256.pem");
    /// Its public half (`openssl pkey -pubout`).
    const OPENSSL_P256_PUB: &str = include_str!("test_keys/p256.pub");

    #[test]
    fn a_signature_verifies_with_its_key_only() {
        let key = SigningKey::from_pem(OPENSSL_P256.as_bytes(), "p256.pem").unwrap();
        let public = PublicKey::from_pem(OPENSSL_P256_PUB.as_bytes(), "p256.pub").unwrap();
        assert_eq!(key.public_key(), &public);
        let signature = key.sign(b"payload");
        assert!(public.verifies(b"payload", &signature));
        assert!(!public.verifies(b"payloaD", &signature));
        let mut bent = signature.clone();
        let last = bent.len() - 1;
        bent[last] ^= 1;
        assert!(!public.verifies(b"payload", &bent));
    }

    #[test]
    fn unreadable_keys_say_what_to_give() {
        let err = PublicKey::from_pem(b"hello", "k.pub")
            .unwrap_err()
            .to_string();
        assert!(err.contains("k.pub is not a PEM public key"), "{err}");
        let err = SigningKey::from_pem(
            b"-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED SIGSTORE PRIVATE KEY-----\n",
            "cosign.key",
        )
        .err()
        .unwrap()
        .to_string();
        assert!(err.contains("cosign import-key-pair"), "{err}");
        let both = format!("{OPENSSL_P256}{OPENSSL_P256_PUB}");
        let err = PublicKey::from_pem(both.as_bytes(), "both.pub")
            .unwrap_err()
            .to_string();
        assert!(err.contains("holds a private key"), "{err}");
        let twice = format!("{OPENSSL_P256_PUB}{OPENSSL_P256_PUB}");
        let err = PublicKey::from_pem(twice.as_bytes(), "two.pub")
            .unwrap_err()
            .to_string();
        assert!(err.contains("one key per file"), "{err}");
        let err = SigningKey::from_pem(OPENSSL_P256_PUB.as_bytes(), "p256.pub")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("PKCS#8"), "{err}");
    }
}
