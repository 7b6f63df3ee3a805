import { useId, type ReactNode, type SelectHTMLAttributes } from 'react';

interface Props extends Omit<SelectHTMLAttributes<HTMLSelectElement>, 'onChange'> {
  label: string;
  onValue(value: string): void;
  /** The <option> elements. */
  children: ReactNode;
}

/** A labelled select, the companion of Field. */
export function SelectField({ label, onValue, className, children, ...select }: Props) {
  const id = useId();
  return (
    <div className={`field ${className ?? ''}`}>
      <label htmlFor={id}>{label}</label>
      <select id={id} onChange={(e) => onValue(e.target.value)} {...select}>
        {children}
      </select>
    </div>
  );
}
