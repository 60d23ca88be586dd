"""The validity of the certificates in a webhook's `caBundle`, and `x509` errors in messages.

A webhook (or CRD conversion) backend whose CA certificate has expired fails every call with
`x509: certificate has expired or is not yet valid` while its Service and endpoints look
healthy. The bundle is in the configuration itself, so no Secret is needed: its PEM blocks are
read here with a minimal DER walk (Certificate → TBSCertificate → validity, subject CN), since
no X.509 library is a dependency (docs/choices.md).
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from datetime import datetime, timezone

PEM = re.compile(rb"-----BEGIN CERTIFICATE-----(.+?)-----END CERTIFICATE-----", re.DOTALL)
COMMON_NAME = bytes([0x06, 0x03, 0x55, 0x04, 0x03])  # OID 2.5.4.3
SEQUENCE, UTC_TIME, GENERALIZED_TIME, VERSION_TAG = 0x30, 0x17, 0x18, 0xA0
# What the API server says when it cannot verify a webhook's serving certificate (Go's
# crypto/x509 errors: CertificateInvalidError Expired, UnknownAuthorityError).
X509 = re.compile(
    r"x509: (certificate has expired or is not yet valid[^\"\n]*?|"
    r"certificate signed by unknown authority[^\"\n]*?)(?=$|[\"\n]|; |, )"
)


@dataclass(frozen=True)
class Certificate:
    subject: str  # its common name, or "" when it has none
    not_before: datetime
    not_after: datetime


def _element(data: bytes, at: int) -> tuple[int, int, int]:
    """(tag, start, end) of the DER element at `at`; ValueError when it does not fit."""
    if at + 2 > len(data):
        raise ValueError("truncated")
    tag, length, start = data[at], data[at + 1], at + 2
    if length & 0x80:
        count = length & 0x7F
        if not 0 < count <= 4 or start + count > len(data):
            raise ValueError("bad length")
        length, start = int.from_bytes(data[start : start + count], "big"), start + count
    if start + length > len(data):
        raise ValueError("truncated")
    return tag, start, start + length


def _children(data: bytes, start: int, end: int) -> list[tuple[int, int, int]]:
    found, at = [], start
    while at < end:
        element = _element(data, at)
        found.append(element)
        at = element[2]
    return found


def _time(tag: int, raw: bytes) -> datetime:
    value = raw.decode("ascii").rstrip("Z")
    if tag == UTC_TIME:  # RFC 5280: YY >= 50 is 19YY
        value = ("19" if int(value[:2]) >= 50 else "20") + value
    elif tag != GENERALIZED_TIME:
        raise ValueError("not a time")
    return datetime.strptime(value[:14], "%Y%m%d%H%M%S").replace(tzinfo=timezone.utc)


def parse_der(der: bytes) -> Certificate:
    """Validity and subject CN of one DER certificate; ValueError when it is not one."""
    tag, start, end = _element(der, 0)
    if tag != SEQUENCE:
        raise ValueError("not a certificate")
    tbs = _element(der, start)
    fields = _children(der, tbs[1], tbs[2])
    if fields and fields[0][0] == VERSION_TAG:
        fields = fields[1:]
    # serialNumber, signature, issuer, validity, subject
    if len(fields) < 5 or fields[3][0] != SEQUENCE:
        raise ValueError("not a certificate")
    times = _children(der, fields[3][1], fields[3][2])
    if len(times) != 2:
        raise ValueError("no validity")
    (t1, s1, e1), (t2, s2, e2) = times
    subject = der[fields[4][1] : fields[4][2]]
    return Certificate(_common_name(subject), _time(t1, der[s1:e1]), _time(t2, der[s2:e2]))


def _common_name(subject: bytes) -> str:
    at = subject.find(COMMON_NAME)
    if at < 0:
        return ""
    try:
        _, start, end = _element(subject, at + len(COMMON_NAME))
    except ValueError:
        return ""
    return subject[start:end].decode("utf-8", "replace")


def ca_bundle(value: object) -> list[Certificate] | None:
    """The certificates of a clientConfig's `caBundle` (base64 of PEM, as the API shows it);
    None when there is none or it cannot be read (then nothing is said of it)."""
    if not isinstance(value, str) or not value:
        return None
    try:
        pem = base64.b64decode(value, validate=False)
        certificates = [
            parse_der(base64.b64decode(b"".join(block.split()))) for block in PEM.findall(pem)
        ]
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None
    return certificates or None


def invalid_at(certificates: list[Certificate], now: datetime) -> tuple[Certificate, str] | None:
    """The first certificate not valid at `now`, and "expired" or "not yet valid"."""
    for certificate in certificates:
        if now > certificate.not_after:
            return certificate, "expired"
        if now < certificate.not_before:
            return certificate, "not yet valid"
    return None


def x509_error(message: str) -> str | None:
    """The `x509: ...` failure a message quotes (an expired or untrusted certificate)."""
    found = X509.search(message)
    return f"x509: {found.group(1).strip()}" if found else None
