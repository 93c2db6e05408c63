"""A small software authenticator for the passkeys' tests: an EC P-256 key (cryptography)
that answers a node's WebAuthn options the way a browser passes an authenticator's
answer on (``credential.toJSON()``), with none attestation, and a signature counter
the test sets."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import struct
from dataclasses import dataclass, field
from typing import Any

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

__all__ = ["SoftKey", "b64url", "unb64url", "webauthn_header"]

UP, UV, AT = 0x01, 0x04, 0x40


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def webauthn_header(answer: dict[str, Any]) -> dict[str, str]:
    """The ``X-WebAuthn`` header that carries a browser's answer: base64url of its JSON."""
    return {"X-WebAuthn": b64url(json.dumps(answer).encode())}


@dataclass
class SoftKey:
    """One credential: its id, its private key, its counter (``count``: the counter the
    next answer says, moved on by each unless a test sets it)."""

    id: bytes = field(default_factory=lambda: secrets.token_bytes(16))
    key: ec.EllipticCurvePrivateKey = field(
        default_factory=lambda: ec.generate_private_key(ec.SECP256R1())
    )
    count: int = 1
    user: bytes = b""

    def _cose(self) -> bytes:
        numbers = self.key.public_key().public_numbers()
        return cbor2.dumps({
            1: 2, 3: -7, -1: 1,
            -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big"),
        })  # fmt: skip

    def _client_data(self, kind: str, challenge: str, origin: str) -> bytes:
        value = {"type": kind, "challenge": challenge, "origin": origin, "crossOrigin": False}
        return json.dumps(value).encode()

    def create(
        self, options: dict[str, Any], origin: str, *, rp_id: str | None = None
    ) -> dict[str, Any]:
        """The answer to registration ``options`` from the page at ``origin`` (the counter
        moves on by one after it)."""
        rp = rp_id or options["rp"]["id"]
        self.user = unb64url(options["user"]["id"])
        client = self._client_data("webauthn.create", options["challenge"], origin)
        attested = bytes(16) + struct.pack(">H", len(self.id)) + self.id + self._cose()
        data = hashlib.sha256(rp.encode()).digest() + bytes([UP | UV | AT])
        data += struct.pack(">I", self.count) + attested
        self.count += 1
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": data})
        return {
            "id": b64url(self.id),
            "rawId": b64url(self.id),
            "type": "public-key",
            "response": {
                "clientDataJSON": b64url(client),
                "attestationObject": b64url(attestation),
                "transports": ["internal"],
            },
            "clientExtensionResults": {},
        }

    def get(
        self, options: dict[str, Any], origin: str, *, rp_id: str | None = None
    ) -> dict[str, Any]:
        """The answer to sign-in ``options`` from the page at ``origin`` (the counter moves
        on by one after it)."""
        rp = rp_id or options["rpId"]
        client = self._client_data("webauthn.get", options["challenge"], origin)
        data = hashlib.sha256(rp.encode()).digest() + bytes([UP | UV])
        data += struct.pack(">I", self.count)
        self.count += 1
        signature = self.key.sign(data + hashlib.sha256(client).digest(), ec.ECDSA(hashes.SHA256()))
        return {
            "id": b64url(self.id),
            "rawId": b64url(self.id),
            "type": "public-key",
            "response": {
                "clientDataJSON": b64url(client),
                "authenticatorData": b64url(data),
                "signature": b64url(signature),
                "userHandle": b64url(self.user) if self.user else None,
            },
            "clientExtensionResults": {},
        }
