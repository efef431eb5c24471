package dev.infertop.workload;

import java.util.Arrays;
import java.util.Comparator;
import java.util.TreeSet;
import java.util.stream.IntStream;

/**
 * Which experts each token is routed to, designed so that for uniformly random tokens (what llama-bench
 * feeds: {@code rand() % n_vocab}) each expert's selection frequency is known exactly in advance.
 *
 * <h2>From a skew to exact frequencies</h2>
 * Expert weights w (Zipf: w_e = 1/(e+1)^s) become selection probabilities p_e = k·w_e/Σw, where k is the
 * number of experts used per token; any p_e above 1 is impossible (an expert is picked at most once per
 * token), so it is capped at 1 and the rest re-spread over the others ("water filling"). These targets
 * are then rounded to whole numbers of tokens m_e = p_e·V (largest remainder, V = vocabulary size) with
 * Σm_e = k·V exactly and every m_e ≤ V.
 *
 * <h2>From frequencies to token sets (systematic sampling)</h2>
 * Lay the experts end to end on [0, k·V) with expert e owning [M_e, M_e + m_e), M the running sum.
 * Each token gets a slot s in [0, V) through a fixed bijection (s = t·stride mod V, stride coprime to V,
 * so byte tokens and neighbours in id land in different classes); it is routed to the experts owning the
 * points s, s+V, …, s+(k-1)·V. Those are k distinct experts (no segment is longer than V, the points are V
 * apart), and expert e is hit by exactly m_e slots. So, over the whole vocabulary, expert e is selected by
 * exactly m_e of the V tokens: {@link #expectedExpertFrequencies()} is m_e/V, exact, and within 1/V of
 * the designed p_e. The segment borders cut [0, V) into at most n_expert intervals; tokens in one
 * interval share the same expert set: they form a routing class.
 *
 * <h2>How the weights enforce it</h2>
 * (See {@link SyntheticWeights}.) Class c owns embedding dimension c: its tokens have a positive value there
 * and exact zeros in every other class dimension. The attention output and FFN down projections have
 * all-zero rows for the class dimensions, so those dimensions of the residual stream equal the embedding
 * in every layer. The router reads only class dimensions: for class c it has a positive weight from
 * dimension c to each expert of the class and zero elsewhere, so after the RMS norm (a positive scale)
 * the class's k experts get positive logits and all others exactly 0. Top-k therefore picks precisely
 * the designed set whatever the random weights do elsewhere — no statistical tolerance is involved in
 * the routing itself. Within a class the logits decrease with rank, so the top-k order is fixed too.
 *
 * <h2>Layers</h2>
 * Layer l uses the layer-0 design with every expert id rotated by l (mod n_expert), so a monitor that
 * mixes up layers shows the wrong expert as hottest.
 *
 * <h2>Tolerance when measuring</h2>
 * With N uniformly random tokens, expert e's count in a layer is Binomial(N, m_e/V): compare with a few
 * standard deviations, sqrt(N·f·(1-f)). Deviations from uniform input: llama-bench starts each prompt and
 * each generation run with BOS (token 1); {@code rand() % V} has a modulo bias of order V/2^31; and
 * llama.cpp evaluates the last layer's FFN only for tokens whose logits are wanted (one per prompt batch),
 * so in prompt processing the last layer sees far fewer tokens than the others.
 */
public final class RouterDesign {

    private final int vocabSize;
    private final int expertCount;
    private final int expertsUsedPerToken;
    private final int layerCount;
    private final double[] designedProbabilities;
    private final long[] tokensPerExpert;
    private final int[] classStartSlots;
    private final int[][] classExperts;
    private final int slotStride;

    /** Zipf-skewed design: expert e (in layer 0) has weight 1/(e+1)^exponent; exponent 0 is uniform. */
    public static RouterDesign zipf(int vocabSize, int expertCount, int expertsUsedPerToken, int layerCount, double exponent) {
        if (!(exponent >= 0) || Double.isInfinite(exponent)) {
            throw new IllegalArgumentException("router skew (Zipf exponent) must be finite and >= 0, got " + exponent);
        }
        double[] weights = IntStream.range(0, expertCount).mapToDouble(e -> Math.pow(e + 1, -exponent)).toArray();
        return new RouterDesign(vocabSize, expertCount, expertsUsedPerToken, layerCount, weights);
    }

    /** A design from arbitrary non-negative per-expert weights (layer 0); at least k must be positive. */
    public RouterDesign(int vocabSize, int expertCount, int expertsUsedPerToken, int layerCount, double[] expertWeights) {
        if (expertCount < 1 || expertsUsedPerToken < 1 || expertsUsedPerToken > expertCount) {
            throw new IllegalArgumentException("need 1 <= experts used (" + expertsUsedPerToken + ") <= experts ("
                    + expertCount + ")");
        }
        if (expertWeights.length != expertCount) {
            throw new IllegalArgumentException("got " + expertWeights.length + " expert weights for " + expertCount + " experts");
        }
        if (vocabSize < 1 || layerCount < 1) {
            throw new IllegalArgumentException("vocabulary size and layer count must be positive");
        }
        this.vocabSize = vocabSize;
        this.expertCount = expertCount;
        this.expertsUsedPerToken = expertsUsedPerToken;
        this.layerCount = layerCount;
        this.designedProbabilities = waterFill(expertWeights, expertsUsedPerToken);
        this.tokensPerExpert = roundToTokenCounts(designedProbabilities, vocabSize, expertsUsedPerToken);
        this.classStartSlots = classBorders(tokensPerExpert, vocabSize);
        this.classExperts = new int[classStartSlots.length][];
        for (int c = 0; c < classStartSlots.length; c++) {
            classExperts[c] = expertsAtSlot(classStartSlots[c]);
        }
        this.slotStride = coprimeStride(vocabSize);
    }

    public int expertCount() {
        return expertCount;
    }

    public int expertsUsedPerToken() {
        return expertsUsedPerToken;
    }

    /** Number of routing classes; class c owns embedding dimension c. */
    public int classCount() {
        return classStartSlots.length;
    }

    public int classOfToken(int tokenId) {
        if (tokenId < 0 || tokenId >= vocabSize) {
            throw new IllegalArgumentException("token " + tokenId + " outside vocabulary of " + vocabSize);
        }
        int slot = (int) ((long) tokenId * slotStride % vocabSize);
        int index = Arrays.binarySearch(classStartSlots, slot);
        return index >= 0 ? index : -index - 2;
    }

    /** The experts layer {@code layer} routes {@code tokenId} to, highest router logit first. */
    public int[] expertsForToken(int layer, int tokenId) {
        return expertsForClass(layer, classOfToken(tokenId));
    }

    /** The experts of a class in a layer, highest router logit first. */
    public int[] expertsForClass(int layer, int classIndex) {
        if (layer < 0 || layer >= layerCount) {
            throw new IllegalArgumentException("layer " + layer + " outside 0.." + (layerCount - 1));
        }
        return Arrays.stream(classExperts[classIndex]).map(e -> (e + layer) % expertCount).toArray();
    }

    /** The target probabilities before rounding to whole tokens, layer 0's expert numbering. */
    public double[] designedProbabilities() {
        return designedProbabilities.clone();
    }

    /**
     * [layer][expert]: the exact probability that a uniformly random token from the whole vocabulary
     * selects that expert in that layer; each row sums to the number of experts used per token.
     */
    public double[][] expectedExpertFrequencies() {
        double[][] frequencies = new double[layerCount][expertCount];
        for (int layer = 0; layer < layerCount; layer++) {
            for (int e = 0; e < expertCount; e++) {
                frequencies[layer][(e + layer) % expertCount] = (double) tokensPerExpert[e] / vocabSize;
            }
        }
        return frequencies;
    }

    /** How many of the V tokens select each expert, layer 0's numbering; sums to k·V. */
    public long[] tokensPerExpert() {
        return tokensPerExpert.clone();
    }

    private int[] expertsAtSlot(int slot) {
        int[] experts = new int[expertsUsedPerToken];
        long segmentEnd = 0;
        int expert = -1;
        for (int j = 0; j < expertsUsedPerToken; j++) {
            long point = slot + (long) j * vocabSize;
            while (segmentEnd <= point) {
                expert++;
                segmentEnd += tokensPerExpert[expert];
            }
            experts[j] = expert;
        }
        return experts;
    }

    private static double[] waterFill(double[] weights, int used) {
        int positive = 0;
        for (double w : weights) {
            if (!(w >= 0) || Double.isInfinite(w)) {
                throw new IllegalArgumentException("expert weights must be finite and >= 0: " + Arrays.toString(weights));
            }
            if (w > 0) {
                positive++;
            }
        }
        if (positive < used) {
            throw new IllegalArgumentException("only " + positive + " experts have a positive weight, but each token uses "
                    + used);
        }
        double[] probabilities = new double[weights.length];
        boolean[] capped = new boolean[weights.length];
        boolean cappedMore = true;
        while (cappedMore) {
            cappedMore = false;
            double freeMass = used;
            double freeWeight = 0;
            for (int e = 0; e < weights.length; e++) {
                if (capped[e]) {
                    freeMass -= 1;
                } else {
                    freeWeight += weights[e];
                }
            }
            for (int e = 0; e < weights.length; e++) {
                probabilities[e] = capped[e] ? 1 : freeMass * weights[e] / freeWeight;
                if (!capped[e] && probabilities[e] > 1) {
                    capped[e] = true;
                    cappedMore = true;
                }
            }
        }
        return probabilities;
    }

    /** Largest-remainder rounding of p·V to integers summing to k·V, none above V. */
    private static long[] roundToTokenCounts(double[] probabilities, int vocabSize, int used) {
        long[] counts = new long[probabilities.length];
        double[] remainders = new double[probabilities.length];
        long total = 0;
        for (int e = 0; e < probabilities.length; e++) {
            double exact = Math.min(probabilities[e], 1.0) * vocabSize;
            counts[e] = (long) Math.floor(exact);
            remainders[e] = exact - counts[e];
            total += counts[e];
        }
        // Floating-point sums can leave the floors a token or two off k·V in either direction.
        long missing = (long) used * vocabSize - total;
        int[] byRemainder = IntStream.range(0, probabilities.length).boxed()
                .sorted(Comparator.comparingDouble((Integer e) -> -remainders[e]).thenComparingInt(e -> e))
                .mapToInt(Integer::intValue).toArray();
        for (int i = 0; missing > 0; i = (i + 1) % byRemainder.length) {
            int e = byRemainder[i];
            if (counts[e] < vocabSize) {
                counts[e]++;
                missing--;
            }
        }
        for (int i = byRemainder.length - 1; missing < 0; i = (i + byRemainder.length - 1) % byRemainder.length) {
            int e = byRemainder[i];
            if (counts[e] > 0) {
                counts[e]--;
                missing++;
            }
        }
        return counts;
    }

    private static int[] classBorders(long[] tokensPerExpert, int vocabSize) {
        TreeSet<Integer> borders = new TreeSet<>();
        borders.add(0);
        long start = 0;
        for (long count : tokensPerExpert) {
            borders.add((int) (start % vocabSize));
            start += count;
        }
        return borders.stream().mapToInt(Integer::intValue).toArray();
    }

    /** A stride near V/φ so that consecutive token ids scatter over the slots; any coprime stride is a bijection. */
    private static int coprimeStride(int vocabSize) {
        int stride = Math.max(1, (int) Math.round(vocabSize * 0.6180339887498949));
        while (gcd(stride, vocabSize) != 1) {
            stride++;
        }
        return stride;
    }

    private static int gcd(int a, int b) {
        return b == 0 ? a : gcd(b, a % b);
    }
}
