// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

interface IPmmRouterSwap {
    function swap(
        address tokenIn,
        uint256 amountIn,
        address tokenOut,
        uint256 minOutAmount,
        uint256 quoteTimestamp,
        bytes calldata verificationData
    ) external returns (uint256 amountOut);
}

interface IERC20Moves {
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
    function approve(address spender, uint256 amount) external returns (bool);
}

/// @title Test aggregator executor: calls the router's `swap` inside its own transaction.
/// @notice What integrators who bring most of the volume do: the service signs for this
/// contract (it is the whitelisted `userAddress`, since the router requires msg.sender ==
/// userAddress), and one transaction may hold several swaps (a split route). Tests and the
/// settlement benchmark use it to prove that nested swaps are found and accounted one by one.
contract TestExecutor {
    struct Leg {
        address tokenIn;
        uint256 amountIn;
        address tokenOut;
        uint256 minOutAmount;
        uint256 quoteTimestamp;
        bytes verificationData;
    }

    address public immutable router;

    /// A leg whose router call reverted and was skipped (allowFailure): its input went back.
    event LegSkipped(uint256 index, bytes reason);

    error TransferFailed();

    constructor(address router_) {
        router = router_;
    }

    /// @notice One swap: takes `amountIn` of `tokenIn` from the caller, swaps it on the router
    /// and sends the output back.
    function swapOne(Leg calldata leg) external returns (uint256 amountOut) {
        _pull(leg);
        amountOut = _swap(leg);
        _send(leg.tokenOut, amountOut);
    }

    /// @notice A split route: every leg in turn, each its own router call. With `allowFailure`
    /// a leg whose router call reverts is skipped (its input is returned; the transaction goes
    /// on), as aggregators do for optional legs; without it, any revert reverts everything.
    function swapBatch(Leg[] calldata legs, bool allowFailure) external returns (uint256[] memory amountsOut) {
        amountsOut = new uint256[](legs.length);
        for (uint256 i = 0; i < legs.length; ++i) {
            Leg calldata leg = legs[i];
            _pull(leg);
            if (!allowFailure) {
                amountsOut[i] = _swap(leg);
                _send(leg.tokenOut, amountsOut[i]);
                continue;
            }
            try IPmmRouterSwap(router).swap(
                leg.tokenIn, leg.amountIn, leg.tokenOut, leg.minOutAmount, leg.quoteTimestamp, leg.verificationData
            ) returns (uint256 out) {
                amountsOut[i] = out;
                _send(leg.tokenOut, out);
            } catch (bytes memory reason) {
                if (!IERC20Moves(leg.tokenIn).approve(router, 0)) revert TransferFailed();
                _send(leg.tokenIn, leg.amountIn);
                emit LegSkipped(i, reason);
            }
        }
    }

    function _pull(Leg calldata leg) private {
        if (!IERC20Moves(leg.tokenIn).transferFrom(msg.sender, address(this), leg.amountIn)) revert TransferFailed();
        if (!IERC20Moves(leg.tokenIn).approve(router, leg.amountIn)) revert TransferFailed();
    }

    function _swap(Leg calldata leg) private returns (uint256) {
        return IPmmRouterSwap(router).swap(
            leg.tokenIn, leg.amountIn, leg.tokenOut, leg.minOutAmount, leg.quoteTimestamp, leg.verificationData
        );
    }

    function _send(address token, uint256 amount) private {
        if (!IERC20Moves(token).transfer(msg.sender, amount)) revert TransferFailed();
    }
}
