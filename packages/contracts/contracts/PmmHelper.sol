// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

interface IPmmRouterViews {
    function listedTokens() external view returns (address[] memory);
    function quoteToken() external view returns (address);
}

interface IBalanceOf {
    function balanceOf(address account) external view returns (uint256);
}

/// @title Read-only helper over one router, with the interface the specification documents.
contract PmmHelper {
    IPmmRouterViews public immutable router;

    constructor(address router_) {
        router = IPmmRouterViews(router_);
    }

    /// @notice Every token the router trades: the quote token first, then the base tokens.
    function getListedTokens() external view returns (address[] memory) {
        return router.listedTokens();
    }

    function getQuoteToken() external view returns (address) {
        return router.quoteToken();
    }

    /// @notice The router's balance of each token, in the order given (its reserves).
    function getReserveBalances(address[] calldata tokens) external view returns (uint256[] memory balances) {
        balances = new uint256[](tokens.length);
        for (uint256 i = 0; i < tokens.length; ++i) {
            balances[i] = IBalanceOf(tokens[i]).balanceOf(address(router));
        }
    }
}
