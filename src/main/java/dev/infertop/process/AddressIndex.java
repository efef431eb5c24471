package dev.infertop.process;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * A file's functions by address: a binary search over them sorted by address, which gives exactly what a scan of
 * the table in its order gives (the first function at an address, or all of them in table order), in
 * O(log n) instead of O(n) a lookup. A stripped library's code is searched for its callees one call at a time
 * (StrippedFunctions, CallSiteScanner), and a crafted one with hundreds of thousands of symbols and of calls made
 * the scan a linear pass per call: hours after the time limit gave up on it.
 */
final class AddressIndex {
    private final List<ElfSymbol> functions;
    /** Indices into {@link #functions}, sorted by address, table order among equal addresses. */
    private final int[] byAddress;
    private final long[] addresses;

    AddressIndex(List<ElfSymbol> functions) {
        this.functions = functions;
        int count = functions.size();
        // Sorted as (address, table index) pairs: stable without boxing, whatever the count.
        long[] vaddrs = new long[count];
        Integer[] order = new Integer[count];
        for (int i = 0; i < count; i++) {
            vaddrs[i] = functions.get(i).vaddr();
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> {
            int byVaddr = Long.compareUnsigned(vaddrs[a], vaddrs[b]);
            return byVaddr != 0 ? byVaddr : Integer.compare(a, b);
        });
        byAddress = new int[count];
        addresses = new long[count];
        for (int i = 0; i < count; i++) {
            byAddress[i] = order[i];
            addresses[i] = vaddrs[order[i]];
        }
    }

    /** The first function, in table order, at exactly {@code vaddr}. */
    Optional<ElfSymbol> first(long vaddr) {
        int at = lowerBound(vaddr);
        return at < addresses.length && addresses[at] == vaddr ? Optional.of(functions.get(byAddress[at]))
                : Optional.empty();
    }

    /** Every function at exactly {@code vaddr}, in table order. */
    List<ElfSymbol> all(long vaddr) {
        List<ElfSymbol> found = new ArrayList<>(1);
        for (int at = lowerBound(vaddr); at < addresses.length && addresses[at] == vaddr; at++) {
            found.add(functions.get(byAddress[at]));
        }
        return found;
    }

    /** The first position whose address is not below {@code vaddr} (unsigned, as addresses are). */
    private int lowerBound(long vaddr) {
        int low = 0;
        int high = addresses.length;
        while (low < high) {
            int mid = (low + high) >>> 1;
            if (Long.compareUnsigned(addresses[mid], vaddr) < 0) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        return low;
    }
}
