/**
 * whisper.cpp's own model file (the ggml format before GGUF that whisper.cpp still reads: magic, hyperparameters,
 * mel filters, vocabulary, named tensors) for a synthetic speech model, and the 16 kHz WAV it transcribes: a
 * second GGML runtime to run under infertop with no downloads.
 * <p>
 * May import: {@code io}, {@code workload} (its PRNG).
 * <p>
 * The layering is checked by LayeringTest (src/test/java/dev/infertop/LayeringTest.java).
 */
package dev.infertop.workload.whisper;
