// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {SignatureRecovery} from "./SignatureRecovery.sol";

/// @title EIP-712 verifier for on-chain quote requests (`AmmVerification`).
/// @dev Stateless, so the same deployment order gives it the same address on every chain;
/// the chain id still separates chains because it is part of the domain.
contract VerificationImpl {
    bytes32 public constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    bytes32 public constant AMM_VERIFICATION_TYPEHASH =
        keccak256("AmmVerification(address tokenIn,address tokenOut,uint256 timestampInMilisec)");
    bytes32 private constant NAME_HASH = keccak256("VerificationImpl");
    bytes32 private constant VERSION_HASH = keccak256("1");

    /// @notice The EIP-712 domain separator, computed per call so that it follows block.chainid.
    function domainSeparator() public view returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, block.chainid, address(this)));
    }

    /// @notice The EIP-712 digest a quoter signs for (tokenIn, tokenOut, timestampInMilisec).
    function hashAmmVerification(address tokenIn, address tokenOut, uint256 timestampInMilisec)
        public
        view
        returns (bytes32)
    {
        bytes32 structHash = keccak256(abi.encode(AMM_VERIFICATION_TYPEHASH, tokenIn, tokenOut, timestampInMilisec));
        return keccak256(abi.encodePacked("\x19\x01", domainSeparator(), structHash));
    }

    /// @notice The address that signed the `AmmVerification` message; reverts InvalidSignature
    /// on a malformed, high-s or unrecoverable signature.
    function recoverQuoter(address tokenIn, address tokenOut, uint256 timestampInMilisec, bytes calldata sig)
        external
        view
        returns (address)
    {
        return SignatureRecovery.recover(hashAmmVerification(tokenIn, tokenOut, timestampInMilisec), sig);
    }
}
