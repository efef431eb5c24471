package dev.infertop.metrics;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;

/**
 * A scrape client's request head, as the endpoint reads it: any bytes, delivered in any pieces, are a head
 * that ends within {@link RequestHead#MAX_BYTES} and parses, or one refused with an IllegalArgumentException
 * (400); never another exception, never a path with a query.
 */
class RequestHeadFuzzTest {
    @FuzzTest(maxDuration = "10s")
    void parse(FuzzedDataProvider data) {
        int piece = data.consumeInt(1, 64);
        byte[] input = data.consumeRemainingAsBytes();
        byte[] head = new byte[RequestHead.MAX_BYTES];
        int length = 0;
        int end = -1;
        while (end < 0 && length < Math.min(input.length, head.length)) {
            int n = Math.min(piece, Math.min(input.length, head.length) - length);
            System.arraycopy(input, length, head, length, n);
            int from = length;
            length += n;
            end = RequestHead.end(head, from, length);
        }
        int whole = RequestHead.end(head, 0, length);
        if (end != whole) {
            throw new AssertionError("piecewise end " + end + " but whole " + whole);
        }
        if (end < 0) {
            return;
        }
        try {
            RequestHead request = RequestHead.parse(head, end);
            if (request.path().contains("?") || request.method().isEmpty()) {
                throw new AssertionError(request.toString());
            }
        } catch (IllegalArgumentException refused) {
            // a 400
        }
    }
}
