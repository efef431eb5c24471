package dev.infertop.ffi;

import org.junit.jupiter.api.Test;

import java.lang.invoke.MethodHandle;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every function is bound at its first use (holder classes, as jextract makes them), so a misspelt name or a
 * symbol the floor libbpf lacks would only fail the run that first calls it: bind them all here, against this
 * machine's libc and libbpf.so.1.
 */
class BindingsTest {
    @Test
    void everyLibbpfFunctionBinds() throws Exception {
        assertTrue(bindAll(LibBpf.class) >= 20);
    }

    @Test
    void everyLibcFunctionBinds() throws Exception {
        assertTrue(bindAll(LibC.class) >= 10);
    }

    @Test
    void everyUserDatabaseFunctionBinds() throws Exception {
        // private handles: each holder class initialised by hand
        List<String> holders = new ArrayList<>();
        for (Class<?> nested : UserDatabase.class.getDeclaredClasses()) {
            if (hasHandle(nested)) {
                var field = nested.getDeclaredField("HANDLE");
                field.setAccessible(true);
                assertNotNull(field.get(null), nested.getName());
                holders.add(nested.getSimpleName());
            }
        }
        assertTrue(holders.containsAll(List.of("getpwnam_r", "getpwuid_r", "getgrouplist", "getuid")), holders.toString());
    }

    /** Calls each public {@code NAME$handle()} of {@code bindings}; how many there were. */
    private static int bindAll(Class<?> bindings) throws Exception {
        int bound = 0;
        for (Method method : bindings.getDeclaredMethods()) {
            if (method.getName().endsWith("$handle") && Modifier.isStatic(method.getModifiers())
                    && method.getParameterCount() == 0 && method.getReturnType() == MethodHandle.class) {
                assertNotNull(method.invoke(null), method.getName());
                bound++;
            }
        }
        return bound;
    }

    private static boolean hasHandle(Class<?> nested) {
        try {
            return nested.getDeclaredField("HANDLE").getType() == MethodHandle.class;
        } catch (NoSuchFieldException e) {
            return false;
        }
    }
}
