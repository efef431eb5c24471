package dev.infertop.process.layout;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A target's own libggml-base loaded into this JVM, with the few ggml calls layout calibration makes.
 *
 * <p>Unlike {@code LibBpf}, handles are per instance: several releases of the same library (same soname,
 * different layouts) can be loaded side by side, each by its path, and each handle is checked to point into
 * the requested file's own code. Every handle is created once, in {@link #load}; calls use
 * {@code invokeExact}. Optional functions (absent in older releases) are {@code null} handles, asked about
 * through {@link #has}.
 *
 * <p>This runs foreign code in our process: a ggml assertion aborts the JVM, and the library's constructors and
 * functions run with our rights. Package-private for that reason: in production only {@link CalibrationChild},
 * an unprivileged process of its own, loads a library. Callers keep every call within
 * ggml's preconditions (shapes that match, a context large enough), which {@link LayoutCalibrator} does.
 *
 * <p>Over 500 lines on purpose: one binding per ggml function calibration calls, each with its signature and
 * the release differences written beside it, in the one class that holds the loaded library; the probes that
 * use them (TensorProbe, GraphProbe, NameTableReader) stay small.
 */
final class GgmlLibrary implements AutoCloseable {
    private static final Linker LINKER = Linker.nativeLinker();

    /** struct ggml_init_params {size_t mem_size; void *mem_buffer; bool no_alloc;}, passed BY VALUE. */
    static final StructLayout INIT_PARAMS = MemoryLayout.structLayout(
            JAVA_LONG.withName("mem_size"),
            ADDRESS.withName("mem_buffer"),
            JAVA_BOOLEAN.withName("no_alloc"),
            MemoryLayout.paddingLayout(7)).withName("ggml_init_params");
    private static final VarHandle MEM_SIZE = INIT_PARAMS.varHandle(MemoryLayout.PathElement.groupElement("mem_size"));
    private static final VarHandle MEM_BUFFER = INIT_PARAMS.varHandle(MemoryLayout.PathElement.groupElement("mem_buffer"));
    private static final VarHandle NO_ALLOC = INIT_PARAMS.varHandle(MemoryLayout.PathElement.groupElement("no_alloc"));

    private final Path path;
    private final Arena arena;
    private final SymbolLookup lookup;
    private final LibraryMappings mappings;

    // struct ggml_context *ggml_init(struct ggml_init_params params)
    private final MethodHandle ggmlInit;
    // void ggml_free(struct ggml_context *ctx)
    private final MethodHandle ggmlFree;
    // struct ggml_tensor *ggml_new_tensor_Nd(struct ggml_context *ctx, enum ggml_type type, int64_t ne0, ...)
    private final MethodHandle newTensor1d;
    private final MethodHandle newTensor2d;
    private final MethodHandle newTensor3d;
    private final MethodHandle newTensor4d;
    // struct ggml_tensor *ggml_add / ggml_mul / ggml_mul_mat(struct ggml_context *ctx, struct ggml_tensor *a, struct ggml_tensor *b)
    private final MethodHandle ggmlAdd;
    private final MethodHandle ggmlMul;
    private final MethodHandle ggmlMulMat;
    // struct ggml_tensor *ggml_view_1d(struct ggml_context *ctx, struct ggml_tensor *a, int64_t ne0, size_t offset)
    private final MethodHandle viewOf1d;
    // struct ggml_tensor *ggml_permute(struct ggml_context *ctx, struct ggml_tensor *a, int axis0, int axis1, int axis2, int axis3)
    private final MethodHandle ggmlPermute;
    // struct ggml_tensor *ggml_set_name(struct ggml_tensor *tensor, const char *name)
    private final MethodHandle setName;
    // const char *ggml_get_name(const struct ggml_tensor *tensor)
    private final MethodHandle getName;
    // struct ggml_cgraph *ggml_new_graph(struct ggml_context *ctx)
    private final MethodHandle newGraph;
    // struct ggml_cgraph *ggml_new_graph_custom(struct ggml_context *ctx, size_t size, bool grads) — optional
    private final MethodHandle newGraphCustom;
    // void ggml_build_forward_expand(struct ggml_cgraph *cgraph, struct ggml_tensor *tensor)
    private final MethodHandle buildForwardExpand;
    // int ggml_graph_n_nodes(struct ggml_cgraph *cgraph) — optional
    private final MethodHandle graphNodeCount;
    // struct ggml_tensor *ggml_graph_node(struct ggml_cgraph *cgraph, int i) — optional
    private final MethodHandle graphNode;
    // const char *ggml_op_name(enum ggml_op op): indexes its table WITHOUT a bounds check
    private final MethodHandle opName;
    // const char *ggml_unary_op_name(enum ggml_unary_op op) — optional; unchecked like ggml_op_name
    private final MethodHandle unaryOpName;
    // const char *ggml_type_name(enum ggml_type type): bounded in older releases ("NONE"), only assert()ed in newer
    private final MethodHandle typeName;
    // size_t ggml_type_size(enum ggml_type type): bytes per block — optional
    private final MethodHandle typeSize;
    // int64_t ggml_blck_size(enum ggml_type type) (int before 2024: read as int, the values are small) — optional
    private final MethodHandle blockSize;
    // size_t ggml_nbytes(const struct ggml_tensor *tensor)
    private final MethodHandle nbytes;
    // size_t ggml_tensor_overhead(void) — optional
    private final MethodHandle tensorOverhead;
    // void *ggml_get_data(const struct ggml_tensor *tensor) — optional
    private final MethodHandle getData;
    // void ggml_set_output(struct ggml_tensor *tensor) / ggml_set_input — optional.
    // (ggml_set_param is not bound: it took (ctx, tensor) until 2025 and (tensor) since; a wrong guess is UB.)
    private final MethodHandle setOutput;
    private final MethodHandle setInput;

    private GgmlLibrary(Path path, Arena arena, SymbolLookup lookup, LibraryMappings mappings)
            throws CalibrationException {
        this.path = path;
        this.arena = arena;
        this.lookup = lookup;
        this.mappings = mappings;
        FunctionDescriptor binaryOp = FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS);
        FunctionDescriptor nameOf = FunctionDescriptor.of(ADDRESS, JAVA_INT);
        FunctionDescriptor tensorOnly = FunctionDescriptor.ofVoid(ADDRESS);
        ggmlInit = required("ggml_init", FunctionDescriptor.of(ADDRESS, INIT_PARAMS));
        ggmlFree = required("ggml_free", FunctionDescriptor.ofVoid(ADDRESS));
        newTensor1d = required("ggml_new_tensor_1d", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG));
        newTensor2d = required("ggml_new_tensor_2d",
                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG, JAVA_LONG));
        newTensor3d = required("ggml_new_tensor_3d",
                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG));
        newTensor4d = required("ggml_new_tensor_4d",
                FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
        ggmlAdd = required("ggml_add", binaryOp);
        ggmlMul = required("ggml_mul", binaryOp);
        ggmlMulMat = required("ggml_mul_mat", binaryOp);
        viewOf1d = required("ggml_view_1d", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_LONG));
        ggmlPermute = required("ggml_permute",
                FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT));
        setName = required("ggml_set_name", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        getName = required("ggml_get_name", FunctionDescriptor.of(ADDRESS, ADDRESS));
        newGraph = required("ggml_new_graph", FunctionDescriptor.of(ADDRESS, ADDRESS));
        newGraphCustom = optional("ggml_new_graph_custom", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_LONG, JAVA_BOOLEAN));
        buildForwardExpand = required("ggml_build_forward_expand", FunctionDescriptor.ofVoid(ADDRESS, ADDRESS));
        graphNodeCount = optional("ggml_graph_n_nodes", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        graphNode = optional("ggml_graph_node", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT));
        opName = required("ggml_op_name", nameOf);
        unaryOpName = optional("ggml_unary_op_name", nameOf);
        typeName = required("ggml_type_name", nameOf);
        typeSize = optional("ggml_type_size", FunctionDescriptor.of(JAVA_LONG, JAVA_INT));
        blockSize = optional("ggml_blck_size", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
        nbytes = required("ggml_nbytes", FunctionDescriptor.of(JAVA_LONG, ADDRESS));
        tensorOverhead = optional("ggml_tensor_overhead", FunctionDescriptor.of(JAVA_LONG));
        getData = optional("ggml_get_data", FunctionDescriptor.of(ADDRESS, ADDRESS));
        setOutput = optional("ggml_set_output", tensorOnly);
        setInput = optional("ggml_set_input", tensorOnly);
    }

    /**
     * Loads {@code libggmlBase} by path (dlopen, RTLD_LOCAL) and binds the calibration calls. Another release
     * already loaded under the same soname does not answer: each symbol is checked against this file's mappings.
     */
    public static GgmlLibrary load(Path libggmlBase) throws CalibrationException {
        if (!Files.isRegularFile(libggmlBase)) {
            throw CalibrationException.of(libggmlBase, "no such file");
        }
        GgmlEnvironment.prepareForLoading();
        Arena arena = Arena.ofShared();
        try {
            SymbolLookup lookup;
            try {
                // By name, not libraryLookup(Path): that one resolves the path with toRealPath() and dlopens
                // the result, which would turn the child's /proc/self/fd/0 back into a path someone can swap.
                lookup = SymbolLookup.libraryLookup(libggmlBase.toString(), arena);
            } catch (IllegalArgumentException e) {
                throw CalibrationException.of(libggmlBase, "dlopen failed (" + dlerrorOf(libggmlBase) + ")");
            }
            return new GgmlLibrary(libggmlBase, arena, lookup, LibraryMappings.ofLoaded(libggmlBase));
        } catch (CalibrationException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /**
     * The loader's own reason ("libx.so: cannot open shared object file: …"), which the JDK's exception leaves
     * out: dlopen is tried once more to read dlerror(3) right after it.
     */
    static String dlerrorOf(Path library) {
        Linker linker = Linker.nativeLinker();
        var dlopen = linker.defaultLookup().find("dlopen");
        var dlerror = linker.defaultLookup().find("dlerror");
        if (dlopen.isEmpty() || dlerror.isEmpty()) {
            return "cannot open " + library;
        }
        try (Arena local = Arena.ofConfined()) {
            // void *dlopen(const char *filename, int flags) / char *dlerror(void) — dlopen(3)
            MethodHandle open = linker.downcallHandle(dlopen.get(), FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT));
            MethodHandle error = linker.downcallHandle(dlerror.get(), FunctionDescriptor.of(ADDRESS));
            MemorySegment handle = (MemorySegment) open.invokeExact(local.allocateFrom(library.toString()),
                    RTLD_NOW | RTLD_LOCAL);
            if (!handle.equals(MemorySegment.NULL)) {
                return "cannot open " + library + " through the JDK, though dlopen can";
            }
            MemorySegment message = (MemorySegment) error.invokeExact();
            // SAFETY: dlerror returns NULL or a NUL-terminated string; 512 bytes bound the read.
            return message.equals(MemorySegment.NULL) ? "cannot open " + library
                    : message.reinterpret(512).getString(0);
        } catch (Throwable t) {
            return "cannot open " + library;
        }
    }

    private static final int RTLD_NOW = 0x2;
    private static final int RTLD_LOCAL = 0;

    private MethodHandle required(String name, FunctionDescriptor descriptor) throws CalibrationException {
        MethodHandle handle = optional(name, descriptor);
        if (handle == null) {
            throw CalibrationException.of(path, "it lacks " + name);
        }
        return handle;
    }

    private MethodHandle optional(String name, FunctionDescriptor descriptor) throws CalibrationException {
        Optional<MemorySegment> symbol = lookup.find(name);
        if (symbol.isEmpty()) {
            return null;
        }
        // A symbol found only in a dependency is refused, not treated as absent: loading a wrapper around
        // libggml-base is a mistake the caller should hear about.
        mappings.requireOwnCode(name, symbol.get());
        return LINKER.downcallHandle(symbol.get(), descriptor);
    }

    public Path path() {
        return path;
    }

    LibraryMappings mappings() {
        return mappings;
    }

    /** Whether an optional function is present in this release (in this file: dlsym also searches its dependencies). */
    public boolean has(String function) {
        return lookup.find(function).filter(mappings::isOwnCode).isPresent();
    }

    @Override
    public void close() {
        arena.close();
    }

    // ---- contexts ----

    /** ggml_init on a caller-owned buffer (aligned to at least 16), so every struct ggml makes lies inside it. */
    public MemorySegment init(MemorySegment memBuffer, boolean noAlloc) throws CalibrationException {
        try (Arena local = Arena.ofConfined()) {
            MemorySegment params = local.allocate(INIT_PARAMS);
            MEM_SIZE.set(params, 0L, memBuffer.byteSize());
            MEM_BUFFER.set(params, 0L, memBuffer);
            NO_ALLOC.set(params, 0L, noAlloc);
            MemorySegment context = (MemorySegment) ggmlInit.invokeExact(params);
            if (context.equals(MemorySegment.NULL)) {
                throw CalibrationException.of(path, "ggml_init returned NULL");
            }
            return context;
        } catch (CalibrationException e) {
            throw e;
        } catch (Throwable t) {
            throw failed("ggml_init", t);
        }
    }

    public void free(MemorySegment context) {
        try {
            ggmlFree.invokeExact(context);
        } catch (Throwable t) {
            throw new IllegalStateException("ggml_free in " + path + " failed", t);
        }
    }

    // ---- tensors ----

    public MemorySegment newTensor1d(MemorySegment ctx, int type, long ne0) throws CalibrationException {
        try {
            return nonNull("ggml_new_tensor_1d", (MemorySegment) newTensor1d.invokeExact(ctx, type, ne0));
        } catch (CalibrationException e) {
            throw e;
        } catch (Throwable t) {
            throw failed("ggml_new_tensor_1d", t);
        }
    }

    public MemorySegment newTensor2d(MemorySegment ctx, int type, long ne0, long ne1) throws CalibrationException {
        try {
            return nonNull("ggml_new_tensor_2d", (MemorySegment) newTensor2d.invokeExact(ctx, type, ne0, ne1));
        } catch (CalibrationException e) {
            throw e;
        } catch (Throwable t) {
            throw failed("ggml_new_tensor_2d", t);
        }
    }

    public MemorySegment newTensor3d(MemorySegment ctx, int type, long ne0, long ne1, long ne2)
            throws CalibrationException {
        try {
            return nonNull("ggml_new_tensor_3d", (MemorySegment) newTensor3d.invokeExact(ctx, type, ne0, ne1, ne2));
        } catch (CalibrationException e) {
            throw e;
        } catch (Throwable t) {
            throw failed("ggml_new_tensor_3d", t);
        }
    }

    public MemorySegment newTensor4d(MemorySegment ctx, int type, long ne0, long ne1, long ne2, long ne3)
            throws CalibrationException {
        try {
            return nonNull("ggml_new_tensor_4d",
                    (MemorySegment) newTensor4d.invokeExact(ctx, type, ne0, ne1, ne2, ne3));
        } catch (CalibrationException e) {
            throw e;
        } catch (Throwable t) {
            throw failed("ggml_new_tensor_4d", t);
        }
    }

    public MemorySegment add(MemorySegment ctx, MemorySegment a, MemorySegment b) throws CalibrationException {
        return binary("ggml_add", ggmlAdd, ctx, a, b);
    }

    public MemorySegment mul(MemorySegment ctx, MemorySegment a, MemorySegment b) throws CalibrationException {
        return binary("ggml_mul", ggmlMul, ctx, a, b);
    }

    public MemorySegment mulMat(MemorySegment ctx, MemorySegment a, MemorySegment b) throws CalibrationException {
        return binary("ggml_mul_mat", ggmlMulMat, ctx, a, b);
    }

    private MemorySegment binary(String name, MethodHandle op, MemorySegment ctx, MemorySegment a, MemorySegment b)
            throws CalibrationException {
        try {
            return nonNull(name, (MemorySegment) op.invokeExact(ctx, a, b));
        } catch (CalibrationException e) {
            throw e;
        } catch (Throwable t) {
            throw failed(name, t);
        }
    }

    public MemorySegment view1d(MemorySegment ctx, MemorySegment a, long ne0, long offsetBytes)
            throws CalibrationException {
        try {
            return nonNull("ggml_view_1d", (MemorySegment) viewOf1d.invokeExact(ctx, a, ne0, offsetBytes));
        } catch (CalibrationException e) {
            throw e;
        } catch (Throwable t) {
            throw failed("ggml_view_1d", t);
        }
    }

    public MemorySegment permute(MemorySegment ctx, MemorySegment a, int axis0, int axis1, int axis2, int axis3)
            throws CalibrationException {
        try {
            return nonNull("ggml_permute",
                    (MemorySegment) ggmlPermute.invokeExact(ctx, a, axis0, axis1, axis2, axis3));
        } catch (CalibrationException e) {
            throw e;
        } catch (Throwable t) {
            throw failed("ggml_permute", t);
        }
    }

    public void setName(MemorySegment tensor, String name) throws CalibrationException {
        try (Arena local = Arena.ofConfined()) {
            MemorySegment ignored = (MemorySegment) setName.invokeExact(tensor, local.allocateFrom(name));
        } catch (Throwable t) {
            throw failed("ggml_set_name", t);
        }
    }

    /** The address of the tensor's name (a pointer into the tensor itself). */
    public MemorySegment getName(MemorySegment tensor) throws CalibrationException {
        try {
            return (MemorySegment) getName.invokeExact(tensor);
        } catch (Throwable t) {
            throw failed("ggml_get_name", t);
        }
    }

    public long nbytes(MemorySegment tensor) throws CalibrationException {
        try {
            return (long) nbytes.invokeExact(tensor);
        } catch (Throwable t) {
            throw failed("ggml_nbytes", t);
        }
    }

    /** ggml_tensor_overhead(): object header + sizeof(struct ggml_tensor); empty in releases without it. */
    public Optional<Long> tensorOverhead() throws CalibrationException {
        if (tensorOverhead == null) {
            return Optional.empty();
        }
        try {
            return Optional.of((long) tensorOverhead.invokeExact());
        } catch (Throwable t) {
            throw failed("ggml_tensor_overhead", t);
        }
    }

    public Optional<MemorySegment> getData(MemorySegment tensor) throws CalibrationException {
        if (getData == null) {
            return Optional.empty();
        }
        try {
            return Optional.of((MemorySegment) getData.invokeExact(tensor));
        } catch (Throwable t) {
            throw failed("ggml_get_data", t);
        }
    }

    /** ggml_set_output, else ggml_set_input: either sets one flag bit. False when the release has neither. */
    public boolean markOutputOrInput(MemorySegment tensor) throws CalibrationException {
        MethodHandle marker = setOutput != null ? setOutput : setInput;
        if (marker == null) {
            return false;
        }
        try {
            marker.invokeExact(tensor);
            return true;
        } catch (Throwable t) {
            throw failed("ggml_set_output", t);
        }
    }

    // ---- graphs ----

    /** ggml_new_graph_custom(ctx, size, false) where present, else ggml_new_graph (whose size is a ggml default). */
    public MemorySegment newGraph(MemorySegment ctx, long size) throws CalibrationException {
        try {
            MemorySegment graph = newGraphCustom != null
                    ? (MemorySegment) newGraphCustom.invokeExact(ctx, size, false)
                    : (MemorySegment) newGraph.invokeExact(ctx);
            return nonNull("ggml_new_graph", graph);
        } catch (CalibrationException e) {
            throw e;
        } catch (Throwable t) {
            throw failed("ggml_new_graph", t);
        }
    }

    public boolean hasCustomGraphSize() {
        return newGraphCustom != null;
    }

    public void buildForwardExpand(MemorySegment graph, MemorySegment tensor) throws CalibrationException {
        try {
            buildForwardExpand.invokeExact(graph, tensor);
        } catch (Throwable t) {
            throw failed("ggml_build_forward_expand", t);
        }
    }

    public Optional<Integer> graphNodeCount(MemorySegment graph) throws CalibrationException {
        if (graphNodeCount == null) {
            return Optional.empty();
        }
        try {
            return Optional.of((int) graphNodeCount.invokeExact(graph));
        } catch (Throwable t) {
            throw failed("ggml_graph_n_nodes", t);
        }
    }

    public Optional<MemorySegment> graphNode(MemorySegment graph, int i) throws CalibrationException {
        if (graphNode == null) {
            return Optional.empty();
        }
        try {
            return Optional.of((MemorySegment) graphNode.invokeExact(graph, i));
        } catch (Throwable t) {
            throw failed("ggml_graph_node", t);
        }
    }

    // ---- name tables (raw pointers: see NameTableReader for how they are bounded) ----

    MemorySegment opNamePointer(int op) throws CalibrationException {
        return namePointer("ggml_op_name", opName, op);
    }

    MemorySegment typeNamePointer(int type) throws CalibrationException {
        return namePointer("ggml_type_name", typeName, type);
    }

    /** ggml_type_size and ggml_blck_size of a named type; empty when the library lacks them or answers 0. */
    Optional<TypeTable.BlockSize> blockSize(int type) throws CalibrationException {
        if (typeSize == null || blockSize == null) {
            return Optional.empty();
        }
        try {
            long bytes = (long) typeSize.invokeExact(type);
            int elements = (int) blockSize.invokeExact(type);
            return bytes > 0 && elements > 0 ? Optional.of(new TypeTable.BlockSize(bytes, elements)) : Optional.empty();
        } catch (Throwable t) {
            throw failed("ggml_type_size", t);
        }
    }

    boolean hasUnaryOpNames() {
        return unaryOpName != null;
    }

    MemorySegment unaryOpNamePointer(int op) throws CalibrationException {
        return namePointer("ggml_unary_op_name", unaryOpName, op);
    }

    private MemorySegment namePointer(String name, MethodHandle function, int index) throws CalibrationException {
        try {
            return (MemorySegment) function.invokeExact(index);
        } catch (Throwable t) {
            throw failed(name, t);
        }
    }

    private MemorySegment nonNull(String function, MemorySegment result) throws CalibrationException {
        if (result.equals(MemorySegment.NULL)) {
            throw CalibrationException.of(path, function + " returned NULL");
        }
        return result;
    }

    private CalibrationException failed(String function, Throwable t) {
        return new CalibrationException("cannot calibrate " + path + ": " + function + " failed: " + t, t);
    }
}
