// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice The signature is not 65 bytes r||s||v with v in {27, 28} and a low s, or it
/// recovers to the zero address.
error InvalidSignature();

/// @title Strict secp256k1 recovery shared by the router (swap signatures) and the verifier
/// (EIP-712 quote signatures).
/// @dev INVARIANT: only the canonical form is accepted (v 27/28, s in the lower half order),
/// so a signature has exactly one valid encoding and cannot be malleated into a second one.
library SignatureRecovery {
    /// secp256k1 group order n divided by 2: signatures with s above it are rejected (EIP-2).
    uint256 internal constant HALF_ORDER =
        0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    /// @notice Recovers the signer of `digest` from a 65-byte r||s||v signature.
    function recover(bytes32 digest, bytes memory signature) internal pure returns (address signer) {
        if (signature.length != 65) revert InvalidSignature();
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly ("memory-safe") {
            r := mload(add(signature, 0x20))
            s := mload(add(signature, 0x40))
            v := byte(0, mload(add(signature, 0x60)))
        }
        if (v != 27 && v != 28) revert InvalidSignature();
        if (uint256(s) > HALF_ORDER) revert InvalidSignature();
        signer = ecrecover(digest, v, r, s);
        if (signer == address(0)) revert InvalidSignature();
    }
}
