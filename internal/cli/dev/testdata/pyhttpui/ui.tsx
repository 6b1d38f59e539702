const Card = (props: { title: string }) => <div className="card">{props.title}</div>;

export default { card: Card };
