/** The RunMap mark: a horizon line under routed expert nodes (same drawing as resources/icon). */
export function Logo({ size = 32 }: { size?: number }) {
  return (
    <svg width={size} height={size} viewBox="0 0 64 64" aria-hidden="true" focusable="false">
      <defs>
        <linearGradient id="logo-bg" x1="0" y1="0" x2="1" y2="1">
          <stop offset="0" stopColor="#4f46e5" />
          <stop offset="1" stopColor="#0ea5e9" />
        </linearGradient>
      </defs>
      <rect width="64" height="64" rx="14" fill="url(#logo-bg)" />
      <path d="M10 44 H54" stroke="#fff" strokeWidth="3.5" strokeLinecap="round" />
      <path d="M18 44 L26 26 L34 34 L44 18" stroke="#fff" strokeWidth="3.5" fill="none" strokeLinejoin="round" strokeLinecap="round" opacity="0.95" />
      <circle cx="26" cy="26" r="4" fill="#fff" />
      <circle cx="34" cy="34" r="4" fill="#fff" />
      <circle cx="44" cy="18" r="4.5" fill="#facc15" />
    </svg>
  );
}
