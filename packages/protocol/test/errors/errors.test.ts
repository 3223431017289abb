import { ApiError, SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS, toErrorEnvelope } from '@pmm/protocol';

describe('ApiError headers', () => {
  it('behavior: every 503 carries Retry-After, the default unless the thrower set one', () => {
    expect(toErrorEnvelope(new ApiError('SERVICE_UNAVAILABLE', 'x'), 'r').headers).toEqual({
      'Retry-After': String(SERVICE_UNAVAILABLE_RETRY_AFTER_SECONDS),
    });
    expect(new ApiError('SERVICE_UNAVAILABLE', 'x', { 'retry-after': '7' }).headers).toEqual({ 'retry-after': '7' });
    expect(new ApiError('SERVICE_UNAVAILABLE', 'x', { Allow: 'GET' }).headers).toEqual({
      Allow: 'GET',
      'Retry-After': '1',
    });
  });

  it('behavior: other statuses get no Retry-After of their own', () => {
    expect(new ApiError('INTERNAL_ERROR', 'x').headers).toEqual({});
    expect(new ApiError('RATE_LIMITED', 'x', { 'Retry-After': '3' }).headers).toEqual({ 'Retry-After': '3' });
    expect(toErrorEnvelope(new Error('boom'), 'r').headers).toEqual({});
  });
});
