package dev.infertop.model;

/**
 * One sequence of a llama_context as its batches showed it (a server slot, an app's chat): its current
 * request's phase and tokens, the request's TTFT and the latest time between two of its outputs.
 *
 * @param context         the llama_context pointer (two in a process with a speculative draft)
 * @param seq             the sequence id (a llama-server slot's id)
 * @param generating      past its prompt (false: the prompt is being read)
 * @param promptTokens    the current request's prompt tokens so far
 * @param generatedTokens the current request's generated tokens decoded so far
 * @param ttftNs          the current request's TTFT, 0 before its first output
 * @param lastTpotNs      the time between its last two outputs, 0 before the second
 * @param idleNs          how long ago it last decoded a token
 */
public record SequenceStatus(long context, int seq, boolean generating, long promptTokens, long generatedTokens,
                             long ttftNs, long lastTpotNs, long idleNs) {}
