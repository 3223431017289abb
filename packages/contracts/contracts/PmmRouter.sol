// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {SignatureRecovery, InvalidSignature} from "./SignatureRecovery.sol";

interface IERC20Like {
    function balanceOf(address account) external view returns (uint256);
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

interface IQuoteVerifier {
    function recoverQuoter(address tokenIn, address tokenOut, uint256 timestampInMilisec, bytes calldata sig)
        external
        view
        returns (address);
}

/// @title Reference PMM router: signed swaps against a piecewise-constant price curve.
/// @notice Written from the interface specification so that tests can prove on a real EVM that
/// what the service signs is accepted, and that tampered or expired data is not.
/// @dev Pricing, per listed base token: a mid price `midPriceX18` (quote raw units per base raw
/// unit, times 1e18) and, per side, cumulative depths in base raw units with a spread in ppm
/// per tier. The marginal price is constant inside a tier, so the orderbook is exactly
/// predictable (reference-curve.ts in the TypeScript package replicates this rounding).
contract PmmRouter {
    uint256 public constant MAX_FEE = 10000;
    uint256 public constant FEE_DENOMINATOR = 100000;
    /// A swap signature may be dated at most this far ahead of the block (clock skew allowance).
    uint256 public constant MAX_FUTURE_SECONDS = 30;
    /// An on-chain quote request must be within this many milliseconds of the block time.
    uint256 public constant QUOTE_WINDOW_MS = 10000;
    uint256 private constant PPM = 1e6;
    uint256 private constant X18 = 1e18;

    struct Curve {
        uint256 midPriceX18;
        uint256[] askDepths;
        uint256[] askSpreadsPpm;
        uint256[] bidDepths;
        uint256[] bidSpreadsPpm;
    }

    address public immutable quoteToken;
    IQuoteVerifier public immutable verifier;
    /// Seconds after `quoteTimestamp` during which a signed swap stays executable.
    uint256 public immutable validity;
    address public owner;
    address public apiSigner;
    mapping(address account => bool) public isQuoter;

    address[] private _baseTokens;
    mapping(address base => uint256) private _indexPlusOne;
    mapping(address base => Curve) private _curves;

    event Swapped(
        address indexed user,
        address indexed tokenIn,
        address indexed tokenOut,
        uint256 amountIn,
        uint256 amountOut,
        uint256 fee,
        uint256 originRate,
        uint256 quoteTimestamp
    );
    event ApiSignerSet(address indexed apiSigner);
    event QuoterSet(address indexed quoter, bool allowed);
    event CurveSet(address indexed base, uint256 midPriceX18);
    event TokenDelisted(address indexed base);

    error NotOwner();
    error WrongSender(address sender, address userAddress);
    error QuoteFromFuture(uint256 quoteTimestamp, uint256 blockTimestamp);
    error QuoteExpired(uint256 quoteTimestamp, uint256 blockTimestamp);
    error FeeTooHigh(uint256 fee);
    error InsufficientOutput(uint256 amountOut, uint256 minOutAmount);
    error PairNotListed(address tokenIn, address tokenOut);
    error DepthExceeded();
    error InsufficientReserve(uint256 amountOut, uint256 reserve);
    error NotQuoter(address signer);
    error QuoteTimestampOutOfRange(uint256 timestampInMilisec, uint256 blockTimestamp);
    error ZeroAmount();
    error InvalidCurve();
    error TransferFailed();

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner();
        _;
    }

    constructor(address quoteToken_, address apiSigner_, address verifier_, uint256 validitySeconds) {
        quoteToken = quoteToken_;
        apiSigner = apiSigner_;
        verifier = IQuoteVerifier(verifier_);
        validity = validitySeconds;
        owner = msg.sender;
        emit ApiSignerSet(apiSigner_);
    }

    // ---------------------------------------------------------------- admin

    function setApiSigner(address apiSigner_) external onlyOwner {
        apiSigner = apiSigner_;
        emit ApiSignerSet(apiSigner_);
    }

    function setQuoter(address quoter, bool allowed) external onlyOwner {
        isQuoter[quoter] = allowed;
        emit QuoterSet(quoter, allowed);
    }

    /// @notice Sets (and lists, if new) the price curve of `base` against the quote token.
    /// @dev Depths are cumulative and strictly increasing; bid spreads stay below 100%.
    function setCurve(
        address base,
        uint256 midPriceX18,
        uint256[] calldata askDepths,
        uint256[] calldata askSpreadsPpm,
        uint256[] calldata bidDepths,
        uint256[] calldata bidSpreadsPpm
    ) external onlyOwner {
        if (base == address(0) || base == quoteToken || midPriceX18 == 0) revert InvalidCurve();
        _checkSide(askDepths, askSpreadsPpm, false);
        _checkSide(bidDepths, bidSpreadsPpm, true);
        if (_indexPlusOne[base] == 0) {
            _baseTokens.push(base);
            _indexPlusOne[base] = _baseTokens.length;
        }
        _curves[base] = Curve(midPriceX18, askDepths, askSpreadsPpm, bidDepths, bidSpreadsPpm);
        emit CurveSet(base, midPriceX18);
    }

    function delistToken(address base) external onlyOwner {
        uint256 indexPlusOne = _indexPlusOne[base];
        if (indexPlusOne == 0) revert PairNotListed(base, quoteToken);
        address last = _baseTokens[_baseTokens.length - 1];
        _baseTokens[indexPlusOne - 1] = last;
        _indexPlusOne[last] = indexPlusOne;
        _baseTokens.pop();
        delete _indexPlusOne[base];
        delete _curves[base];
        emit TokenDelisted(base);
    }

    // ---------------------------------------------------------------- views

    /// @notice The quote token first, then every listed base token.
    function listedTokens() external view returns (address[] memory tokens) {
        uint256 n = _baseTokens.length;
        tokens = new address[](n + 1);
        tokens[0] = quoteToken;
        for (uint256 i = 0; i < n; ++i) {
            tokens[i + 1] = _baseTokens[i];
        }
    }

    function getCurve(address base) external view returns (Curve memory) {
        if (_indexPlusOne[base] == 0) revert PairNotListed(base, quoteToken);
        return _curves[base];
    }

    /// @notice On-chain quote: the gross curve output (before any fee) for an EIP-712 request
    /// signed by a whitelisted quoter within QUOTE_WINDOW_MS of the block time.
    function quote(address tokenIn, uint256 amountIn, address tokenOut, uint256 timestampInMilisec, bytes calldata sig)
        external
        view
        returns (uint256 amountOut)
    {
        uint256 nowMs = block.timestamp * 1000;
        uint256 distance = timestampInMilisec > nowMs ? timestampInMilisec - nowMs : nowMs - timestampInMilisec;
        if (distance > QUOTE_WINDOW_MS) revert QuoteTimestampOutOfRange(timestampInMilisec, block.timestamp);
        address signer = verifier.recoverQuoter(tokenIn, tokenOut, timestampInMilisec, sig);
        if (!isQuoter[signer]) revert NotQuoter(signer);
        amountOut = _curveOut(tokenIn, amountIn, tokenOut);
        uint256 reserve = IERC20Like(tokenOut).balanceOf(address(this));
        if (amountOut > reserve) revert InsufficientReserve(amountOut, reserve);
    }

    /// @notice The address that signed a swap's verificationData for these arguments (the
    /// router accepts the swap only when this is `apiSigner`). Lets operators and tests check
    /// a signing key against the chain without sending a transaction.
    function recoverSwapSigner(
        address tokenIn,
        address tokenOut,
        uint256 quoteTimestamp,
        bytes calldata verificationData
    ) external pure returns (address) {
        (uint256 fee, uint256 originRate, address userAddress, bytes memory signature) =
            abi.decode(verificationData, (uint256, uint256, address, bytes));
        bytes32 digest = _swapDigest(tokenIn, tokenOut, quoteTimestamp, fee, originRate, userAddress);
        return SignatureRecovery.recover(digest, signature);
    }

    // ---------------------------------------------------------------- swap

    /// @notice Executes a swap signed by the API signer. verificationData =
    /// abi.encode(uint256 fee, uint256 originRate, address userAddress, bytes signature); the
    /// signature covers keccak256(abi.encode(tokenIn, tokenOut, quoteTimestamp, fee, originRate,
    /// userAddress)) with no EIP-191 prefix. Pays curveOut(amountIn) * (100000 - fee) / 100000.
    function swap(
        address tokenIn,
        uint256 amountIn,
        address tokenOut,
        uint256 minOutAmount,
        uint256 quoteTimestamp,
        bytes calldata verificationData
    ) external returns (uint256 amountOut) {
        (uint256 fee, uint256 originRate) = _verifySwap(tokenIn, tokenOut, quoteTimestamp, verificationData);
        amountOut = _settle(tokenIn, amountIn, tokenOut, minOutAmount, fee);
        emit Swapped(msg.sender, tokenIn, tokenOut, amountIn, amountOut, fee, originRate, quoteTimestamp);
    }

    /// @dev Checks sender, signature, time window and fee; returns the signed fee and origin rate.
    function _verifySwap(address tokenIn, address tokenOut, uint256 quoteTimestamp, bytes calldata verificationData)
        private
        view
        returns (uint256 fee, uint256 originRate)
    {
        address userAddress;
        bytes memory signature;
        (fee, originRate, userAddress, signature) = abi.decode(verificationData, (uint256, uint256, address, bytes));
        if (msg.sender != userAddress) revert WrongSender(msg.sender, userAddress);
        bytes32 digest = _swapDigest(tokenIn, tokenOut, quoteTimestamp, fee, originRate, userAddress);
        if (SignatureRecovery.recover(digest, signature) != apiSigner) revert InvalidSignature();
        if (quoteTimestamp > block.timestamp + MAX_FUTURE_SECONDS) {
            revert QuoteFromFuture(quoteTimestamp, block.timestamp);
        }
        if (block.timestamp > quoteTimestamp + validity) revert QuoteExpired(quoteTimestamp, block.timestamp);
        if (fee > MAX_FEE) revert FeeTooHigh(fee);
    }

    /// @dev Prices the swap net of the fee, checks slippage and reserves, moves the tokens.
    function _settle(address tokenIn, uint256 amountIn, address tokenOut, uint256 minOutAmount, uint256 fee)
        private
        returns (uint256 amountOut)
    {
        amountOut = (_curveOut(tokenIn, amountIn, tokenOut) * (FEE_DENOMINATOR - fee)) / FEE_DENOMINATOR;
        if (amountOut < minOutAmount) revert InsufficientOutput(amountOut, minOutAmount);
        uint256 reserve = IERC20Like(tokenOut).balanceOf(address(this));
        if (amountOut > reserve) revert InsufficientReserve(amountOut, reserve);
        if (!IERC20Like(tokenIn).transferFrom(msg.sender, address(this), amountIn)) revert TransferFailed();
        if (!IERC20Like(tokenOut).transfer(msg.sender, amountOut)) revert TransferFailed();
    }

    /// @dev The spec's digest: keccak256 of the ABI encoding of the six fields, no EIP-191 prefix.
    function _swapDigest(
        address tokenIn,
        address tokenOut,
        uint256 quoteTimestamp,
        uint256 fee,
        uint256 originRate,
        address userAddress
    ) private pure returns (bytes32) {
        return keccak256(abi.encode(tokenIn, tokenOut, quoteTimestamp, fee, originRate, userAddress));
    }

    // ---------------------------------------------------------------- pricing

    function _checkSide(uint256[] calldata depths, uint256[] calldata spreads, bool isBid) private pure {
        if (depths.length != spreads.length) revert InvalidCurve();
        uint256 previous = 0;
        for (uint256 i = 0; i < depths.length; ++i) {
            if (depths[i] <= previous) revert InvalidCurve();
            if (isBid && spreads[i] >= PPM) revert InvalidCurve();
            previous = depths[i];
        }
    }

    /// @dev Gross output of the curve for `amountIn`. Exactly one side must be the quote token.
    function _curveOut(address tokenIn, uint256 amountIn, address tokenOut) private view returns (uint256) {
        if (amountIn == 0) revert ZeroAmount();
        if (tokenIn == quoteToken && tokenOut != quoteToken && _indexPlusOne[tokenOut] != 0) {
            return _askOut(_curves[tokenOut], amountIn);
        }
        if (tokenOut == quoteToken && tokenIn != quoteToken && _indexPlusOne[tokenIn] != 0) {
            return _bidOut(_curves[tokenIn], amountIn);
        }
        revert PairNotListed(tokenIn, tokenOut);
    }

    /// @dev The market maker buys base: base in, quote out, floor per tier.
    function _bidOut(Curve storage c, uint256 baseIn) private view returns (uint256 out) {
        uint256 remaining = baseIn;
        uint256 previous = 0;
        uint256 n = c.bidDepths.length;
        for (uint256 i = 0; i < n && remaining != 0; ++i) {
            uint256 depth = c.bidDepths[i];
            uint256 cap = depth - previous;
            previous = depth;
            uint256 take = remaining < cap ? remaining : cap;
            uint256 priceX18 = (c.midPriceX18 * (PPM - c.bidSpreadsPpm[i])) / PPM;
            out += (take * priceX18) / X18;
            remaining -= take;
        }
        if (remaining != 0) revert DepthExceeded();
    }

    /// @dev The market maker sells base: quote in, base out. A full tier costs
    /// ceil(cap * price / 1e18) quote; a partial tier gives floor(rem * 1e18 / price) base.
    function _askOut(Curve storage c, uint256 quoteIn) private view returns (uint256 out) {
        uint256 remaining = quoteIn;
        uint256 previous = 0;
        uint256 n = c.askDepths.length;
        for (uint256 i = 0; i < n && remaining != 0; ++i) {
            uint256 depth = c.askDepths[i];
            uint256 cap = depth - previous;
            previous = depth;
            uint256 priceX18 = (c.midPriceX18 * (PPM + c.askSpreadsPpm[i])) / PPM;
            uint256 costFull = (cap * priceX18 + X18 - 1) / X18;
            if (remaining >= costFull) {
                out += cap;
                remaining -= costFull;
            } else {
                out += (remaining * X18) / priceX18;
                remaining = 0;
            }
        }
        if (remaining != 0) revert DepthExceeded();
    }
}
